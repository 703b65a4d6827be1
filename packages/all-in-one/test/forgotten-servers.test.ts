import { describe, expect, it } from "vitest";
import { forgottenServers } from "../src/core/forgotten-servers.js";

describe("forgottenServers", () => {
  it("names the servers with a catalog entry the configuration does not have, and nothing else of the bucket", () => {
    const keys = ["server.alpha", "server.beta", "server.gamma", "naming", "server.bad name"];
    expect(forgottenServers(keys, ["gamma"])).toEqual(["alpha", "beta"]);
  });

  it("names none when every entry is configured", () => {
    expect(forgottenServers(["server.alpha"], ["alpha", "beta"])).toEqual([]);
  });
});
