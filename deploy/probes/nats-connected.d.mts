// Types of nats-connected.mjs, for the tests that import it.
export function natsPorts(natsUrl: string | undefined): number[];
export function hasEstablishedConnection(procNetTcp: string, ports: readonly number[]): boolean;
