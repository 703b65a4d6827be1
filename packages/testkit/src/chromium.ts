/** The Chromium the browser tests drive: CHROMIUM_PATH, else Debian's or Homebrew's (scripts/setup.sh --tests). */
import { existsSync } from "node:fs";

const CANDIDATES = ["/usr/bin/chromium", "/Applications/Chromium.app/Contents/MacOS/Chromium"];

export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH;
  const found = CANDIDATES.find((candidate) => existsSync(candidate));
  if (found) return found;
  throw new Error(
    `Chromium not found (looked in ${CANDIDATES.join(", ")}): run \`bash scripts/setup.sh --tests\`, or set CHROMIUM_PATH to a Chromium or Chrome binary.`,
  );
}
