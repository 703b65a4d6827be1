import { describe, expect, it } from "vitest";
import { CUT_MARKER, GATEWAY_INTRO, gatewayInstructions } from "../../src/core/gateway-instructions.js";

const bytes = (text: string) => new TextEncoder().encode(text).length;
const HEAD = `${GATEWAY_INTRO}\nInstructions from the MCP servers behind it follow, one section per server.`;

describe("the gateway's initialize instructions", () => {
  it("are the gateway's line alone when no server sent instructions", () => {
    expect(gatewayInstructions([{ name: "a" }, { name: "b", instructions: "  \n " }])).toBe(GATEWAY_INTRO);
  });

  it("[20] give one section per server that sent instructions, by name, trimmed", () => {
    expect(
      gatewayInstructions([
        { name: "zeta", instructions: "  Use zeta last.\n" },
        { name: "alpha", instructions: "Search first." },
        { name: "quiet" },
      ]),
    ).toBe(`${HEAD}\n\n## alpha\nSearch first.\n\n## zeta\nUse zeta last.`);
  });

  it("cut only the long sections when over the limit, each to a fair share, marked", () => {
    const short = "Short and whole.";
    const long = "x".repeat(5_000);
    const text = gatewayInstructions(
      [
        { name: "a", instructions: long },
        { name: "b", instructions: short },
        { name: "c", instructions: long },
      ],
      2_000,
    );
    expect(bytes(text)).toBeLessThanOrEqual(2_000);
    const sections = text.split("\n\n## ").slice(1);
    expect(sections[1]).toBe(`b\n${short}`);
    for (const section of [sections[0], sections[2]]) expect(section).toMatch(/^[ac]\nx+\n\[… cut to fit/);
    // Equal shares (the last one takes the odd byte of an uneven split).
    expect(bytes(sections[2] ?? "") - bytes(sections[0] ?? "")).toBeGreaterThanOrEqual(0);
    expect(bytes(sections[2] ?? "") - bytes(sections[0] ?? "")).toBeLessThanOrEqual(1);
    // The room left by the headings and the short section is shared, less the markers.
    const room = 2_000 - bytes(`${HEAD}\n\n## a\n\n\n## b\n${short}\n\n## c\n`);
    expect(bytes(sections[0] ?? "")).toBeGreaterThan(Math.floor(room / 2) - bytes(CUT_MARKER));
  });

  it("leave the last servers out, saying how many, when even the headings do not fit", () => {
    const servers = Array.from({ length: 200 }, (_, i) => ({
      name: `server-${String(i).padStart(3, "0")}`,
      instructions: "Some instructions.",
    }));
    const text = gatewayInstructions(servers, 1_024);
    expect(bytes(text)).toBeLessThanOrEqual(1_024);
    expect(text).toMatch(
      /\n\n\[… the instructions of \d+ more servers left out to fit the gateway's instructions\]$/,
    );
    expect(text).toContain("## server-000\n");
  });
});
