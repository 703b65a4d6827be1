// Table: every dispatch, lifecycle events, connector calls and relays — valid samples round-trip, unknown fields go, bad fields are named.
import { CALL_CASES } from "./schemas-cases-calls.js";
import { describeMessageCases } from "./schemas-support.js";

describeMessageCases(CALL_CASES);
