// Table: every memory messages — valid samples round-trip, unknown fields go, bad fields are named.
import { MEMORY_CASES } from "./schemas-cases-memory.js";
import { describeMessageCases } from "./schemas-support.js";

describeMessageCases(MEMORY_CASES);
