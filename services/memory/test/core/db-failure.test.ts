import { describe, expect, it } from "vitest";
import {
  classifyDbFailure,
  type DbFailureFacts,
  type DbFailureKind,
  dbFailureHint,
} from "../../src/core/db-failure.js";

describe("classifyDbFailure", () => {
  const cases: Array<{ name: string; facts: DbFailureFacts; kind: DbFailureKind }> = [
    {
      name: "a refused connection",
      facts: { errno: "ECONNREFUSED", message: "connect ECONNREFUSED" },
      kind: "transient",
    },
    { name: "a reset socket", facts: { errno: "ECONNRESET", message: "read ECONNRESET" }, kind: "transient" },
    {
      name: "a connection the server dropped",
      facts: { message: "Connection terminated unexpectedly" },
      kind: "transient",
    },
    {
      name: "a pool connect timeout",
      facts: { message: "timeout exceeded when trying to connect" },
      kind: "transient",
    },
    {
      name: "an admin shutdown (57P01)",
      facts: { sqlState: "57P01", message: "terminating connection" },
      kind: "transient",
    },
    {
      name: "a server starting up (57P03)",
      facts: { sqlState: "57P03", message: "the database system is starting up" },
      kind: "transient",
    },
    {
      name: "a connection exception (08006)",
      facts: { sqlState: "08006", message: "connection failure" },
      kind: "transient",
    },
    {
      name: "too many connections (53300)",
      facts: { sqlState: "53300", message: "too many clients" },
      kind: "transient",
    },
    {
      name: "a serialization failure (40001)",
      facts: { sqlState: "40001", message: "could not serialize" },
      kind: "transient",
    },
    {
      name: "a deadlock (40P01)",
      facts: { sqlState: "40P01", message: "deadlock detected" },
      kind: "transient",
    },
    {
      name: "a statement timeout (57014)",
      facts: { sqlState: "57014", message: "canceling statement" },
      kind: "transient",
    },
    {
      name: "a NUL byte in text (22021)",
      facts: { sqlState: "22021", message: "invalid byte sequence" },
      kind: "permanent",
    },
    {
      name: "a missing table (42P01)",
      facts: { sqlState: "42P01", message: 'relation "x" does not exist' },
      kind: "permanent",
    },
    {
      name: "a wrong password (28P01)",
      facts: { sqlState: "28P01", message: "password authentication failed" },
      kind: "permanent",
    },
    {
      name: "a bug in our code",
      facts: { message: "Cannot read properties of undefined" },
      kind: "permanent",
    },
  ];

  it.each(cases)("treats $name as $kind", ({ facts, kind }) => {
    expect(classifyDbFailure(facts)).toBe(kind);
  });
});

describe("dbFailureHint", () => {
  it.each([
    { sqlState: "3F000", hint: /CREATE SCHEMA/ },
    { sqlState: "28P01", hint: /user and password/ },
    { sqlState: "3D000", hint: /create the database/ },
  ])("tells the operator what to do about $sqlState", ({ sqlState, hint }) => {
    expect(dbFailureHint(sqlState)).toMatch(hint);
  });

  it("has nothing to add for failures that pass by themselves", () => {
    expect([dbFailureHint("40P01"), dbFailureHint(undefined)]).toEqual([undefined, undefined]);
  });
});
