// Table: every approval requests and events — valid samples round-trip, unknown fields go, bad fields are named.
import { APPROVAL_CASES } from "./schemas-cases-approvals.js";
import { describeMessageCases } from "./schemas-support.js";

describeMessageCases(APPROVAL_CASES);
