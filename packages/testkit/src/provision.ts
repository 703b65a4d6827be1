/**
 * The JetStream assets of a test's prefix, made as the provisioner makes them before any service
 * starts (services create nothing): the defaults of toolbus.toml's tables, or the test's own.
 */
import { natsServers, type ProvisionSettings, provisionBus } from "@toolbus/bus";
import { DEFAULT_BUS_CONFIG, DEFAULT_MEMORY_CONFIG, provisionInputs } from "@toolbus/config";
import { createSubjects } from "@toolbus/protocol";

export async function provisionPrefix(
  natsUrl: string,
  prefix: string,
  overrides: Partial<ProvisionSettings> = {},
): Promise<void> {
  const defaults = provisionInputs({ bus: DEFAULT_BUS_CONFIG, memory: DEFAULT_MEMORY_CONFIG }, {});
  await provisionBus({
    access: { servers: natsServers(natsUrl) },
    subjects: createSubjects(prefix),
    settings: { ...defaults, replicas: 1, ...overrides },
  });
}
