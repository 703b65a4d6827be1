// What the contract fixes about an asset's stream and the memory consumer, and how each
// difference is named (a service that refuses to start quotes these phrases).
import { describe, expect, it } from "vitest";
import {
  consumerDifferences,
  contractDifferences,
  type StreamContract,
} from "../../src/core/asset-contract.js";

const contract: StreamContract = {
  name: "TOOLBUS_EVENTS",
  subjects: ["toolbus.events.>"],
  deny_delete: true,
  deny_purge: true,
  allow_direct: false,
};
const asMade = {
  name: "TOOLBUS_EVENTS",
  subjects: ["toolbus.events.>"],
  deny_delete: true,
  deny_purge: true,
};

describe("contractDifferences", () => {
  it("finds none in a stream as the provisioner made it, whatever the order of its subjects", () => {
    expect(contractDifferences(contract, asMade)).toEqual([]);
    const two = { ...contract, subjects: ["a.>", "b.>"] };
    expect(contractDifferences(two, { ...asMade, subjects: ["b.>", "a.>"] })).toEqual([]);
    // Empty lists and nulls are what JetStream reports for "none".
    expect(contractDifferences(contract, { ...asMade, sources: [], republish: null })).toEqual([]);
  });

  it("names each way a stream could copy or capture messages, and each flag that differs", () => {
    expect(
      contractDifferences(contract, {
        name: "TOOLBUS_EVENTS",
        subjects: ["toolbus.events.>", "toolbus.approvals.>"],
        republish: { src: ">", dest: "copy.>" },
        sources: [{ name: "OTHER" }],
        mirror: { name: "ELSEWHERE" },
        subject_transform: { src: ">", dest: "x.>" },
        deny_delete: false,
        allow_direct: true,
      }),
    ).toEqual([
      'subjects are ["toolbus.approvals.>","toolbus.events.>"] (the contract: ["toolbus.events.>"])',
      'republish is {"src":">","dest":"copy.>"} (the contract: none)',
      'sources is [{"name":"OTHER"}] (the contract: none)',
      'mirror is {"name":"ELSEWHERE"} (the contract: none)',
      'subject_transform is {"src":">","dest":"x.>"} (the contract: none)',
      "deny_delete is false (the contract: true)",
      "deny_purge is false (the contract: true)",
      "allow_direct is true (the contract: false)",
    ]);
  });
});

describe("consumerDifferences", () => {
  const durable = { stream: "TOOLBUS_MEMORY", durable: "memory", filter: "toolbus.memory.message" };

  it("finds none in a pull consumer with the one filter and explicit acks", () => {
    expect(
      consumerDifferences(durable, { filter_subject: "toolbus.memory.message", ack_policy: "explicit" }),
    ).toEqual([]);
    expect(
      consumerDifferences(durable, { filter_subjects: ["toolbus.memory.message"], ack_policy: "explicit" }),
    ).toEqual([]);
  });

  it("names another filter, a push delivery and another ack policy", () => {
    expect(
      consumerDifferences(durable, {
        filter_subjects: ["toolbus.memory.message", "toolbus.memory.other"],
        deliver_subject: "somewhere",
        ack_policy: "none",
      }),
    ).toEqual([
      'its filter is ["toolbus.memory.message","toolbus.memory.other"] (the contract: ["toolbus.memory.message"])',
      "it delivers to somewhere (the contract: a pull consumer, none)",
      "its ack policy is none (the contract: explicit)",
    ]);
  });
});
