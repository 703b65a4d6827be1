// Table: every catalog requests, the KV entry and catalog events — valid samples round-trip, unknown fields go, bad fields are named.
import { CATALOG_CASES } from "./schemas-cases-catalog.js";
import { describeMessageCases } from "./schemas-support.js";

describeMessageCases(CATALOG_CASES);
