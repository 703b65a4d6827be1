/**
 * The sessions this replica holds: created on initialize, found by id (or rebuilt from the
 * session store when another replica started them) for the principal that started them only,
 * expired after the idle TTL, capped in number in all and per client (the least recently used
 * idle session makes room), and told when the tool or prompt listing changed.
 *
 * A session's "Allow for this session" grants end with it: at once when its client ends it
 * (DELETE), and when it expires — which a replica that let it go (idle, or to make room) learns
 * once its idle TTL has passed and no replica has stored its record since.
 */

import type { InitializeRequest } from "@modelcontextprotocol/server";
import type { Logger } from "@toolbus/bus";
import { ANONYMOUS } from "@toolbus/http-guard";
import type { SessionRecord } from "../../core/session-record.js";
import { sessionThreads, type ThreadClaim } from "../../core/session-threads.js";
import type { SessionStore } from "../nats/session-store.js";
import { McpSession, type McpSessionDeps } from "./mcp-session.js";

export interface SessionRegistryOptions {
  session: Omit<McpSessionDeps, "onRecord" | "onEnded" | "onClosed" | "isSession" | "claimThread">;
  /** What a session of each view (`/mcp/<view>`) uses instead: its part of the catalog, resources and prompts. */
  views?: ReadonlyMap<string, ViewSessionDeps>;
  store: SessionStore;
  logger: Logger;
  idleTtlMs: number;
  maxSessions: number;
  /** Sessions one principal holds; past it that principal's least recently used idle one is closed. */
  maxSessionsPerClient: number;
  now(): number;
}

export type ViewSessionDeps = Pick<McpSessionDeps, "ports" | "resources" | "prompts" | "instructions">;

/** No room for another session: every held session is busy. */
export class SessionsFull extends Error {
  constructor(max: number) {
    super(
      `the gateway holds its maximum of ${max} sessions and all are in use; retry later, or end unused sessions with DELETE /mcp`,
    );
    this.name = "SessionsFull";
  }
}

/** No room for another session of this client: every one it holds is busy. */
export class ClientSessionsFull extends Error {
  constructor(principal: string, max: number) {
    super(
      `Too Many Requests: ${principal} holds ${max} MCP sessions, the most one client may ([gateway] max_sessions_per_client), and all are in use; end unused sessions with DELETE /mcp, or retry later`,
    );
    this.name = "ClientSessionsFull";
  }
}

export class SessionRegistry {
  readonly #sessions = new Map<string, McpSession>();
  readonly #restoring = new Map<string, Promise<McpSession | undefined>>();
  readonly #stored = new Map<string, number>();
  /**
   * Sessions this replica let go of without their client ending them (idle, or evicted to make
   * room), with their threads: when their idle TTL has passed and their record is gone, they
   * expired, and their grants are forgotten. At most `maxSessions`.
   */
  readonly #departed = new Map<string, { threads: string[]; lastSeen: number }>();
  readonly #options: SessionRegistryOptions;
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: SessionRegistryOptions) {
    this.#options = options;
    options.store.onClosed((sessionId) => {
      // Ended by its client where it was: that replica forgot its grants.
      this.#departed.delete(sessionId);
      const session = this.#sessions.get(sessionId);
      if (session) void this.#drop(session, "ended by the client on another replica");
    });
    options.store.onResponses((sessionId, messages) => {
      const session = this.#sessions.get(sessionId);
      if (!session || session.openAsks === 0) return;
      try {
        session.acceptForwarded(messages);
      } catch (error) {
        options.logger.warn(
          { err: error, sessionId },
          "could not take a client's answer forwarded by another replica",
        );
      }
    });
    this.#sweeper = setInterval(() => this.sweep(), Math.max(250, Math.min(options.idleTtlMs / 4, 30_000)));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /**
   * A session for a client's initialize request, owned by `principal`. Throws
   * `ClientSessionsFull` or `SessionsFull` when there is no room.
   */
  async create(init: InitializeRequest["params"], principal: string, view?: string): Promise<McpSession> {
    this.#makeRoomFor(principal);
    this.#makeRoom();
    return McpSession.create(this.#sessionDeps(view), init, principal, view);
  }

  /**
   * The session with this id if `principal` owns it, rebuilt from its record if another replica
   * started it (or this one let it go to make room). Throws `ClientSessionsFull` or
   * `SessionsFull` when a rebuilt one has no room.
   */
  async find(sessionId: string, principal: string, view?: string): Promise<McpSession | undefined> {
    const found = await this.#find(sessionId);
    // A session serves the view it was started on: on another, it is as unknown as any.
    return found?.principal === principal && found.view === view ? found : undefined;
  }

  async #find(sessionId: string): Promise<McpSession | undefined> {
    const held = this.#sessions.get(sessionId);
    if (held) return held;
    let restoring = this.#restoring.get(sessionId);
    if (!restoring) {
      restoring = this.#restore(sessionId).finally(() => this.#restoring.delete(sessionId));
      this.#restoring.set(sessionId, restoring);
    }
    return restoring;
  }

  /** Marks a request on the session as started; call `finished` when its response ended. */
  begin(session: McpSession): () => void {
    session.openResponses += 1;
    session.lastSeen = this.#options.now();
    this.#refreshRecord(session);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      session.openResponses -= 1;
      session.lastSeen = this.#options.now();
    };
  }

  /**
   * Answers (JSON-RPC responses) for a session that asked this replica nothing: another replica
   * asked, so they go there.
   */
  forwardIfAskedElsewhere(session: McpSession, messages: readonly unknown[]): boolean {
    if (session.openAsks > 0 || session.sessionId === undefined) return false;
    this.#options.store.forwardResponses(session.sessionId, messages);
    return true;
  }

  notifyToolListChanged(): void {
    for (const session of this.#sessions.values()) session.notifyToolListChanged();
  }

  notifyPromptListChanged(): void {
    for (const session of this.#sessions.values()) session.notifyPromptListChanged();
  }

  /**
   * Closes sessions idle for longer than the TTL (no request, no open stream), and forgets the
   * grants of those let go of that have expired since.
   */
  sweep(): void {
    const cutoff = this.#options.now() - this.#options.idleTtlMs;
    for (const session of [...this.#sessions.values()]) {
      if (session.openResponses === 0 && session.lastSeen < cutoff)
        void this.#drop(session, "idle", { departs: true });
    }
    for (const [sessionId, departed] of [...this.#departed]) {
      if (departed.lastSeen >= cutoff) continue;
      void this.#options.store.expired(sessionId).then((expired) => {
        // Unknown (the store did not answer): asked again at the next sweep.
        if (expired === undefined || this.#departed.get(sessionId) !== departed) return;
        this.#departed.delete(sessionId);
        // Not expired: another replica stored it since, and holds it now; it forgets them in turn.
        if (expired) void this.#options.session.ports.approvals.forgetThreads(departed.threads);
      });
    }
  }

  /** Closes every session; their grants stay for a replica that takes them on (or their end). */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.values()].map((session) => this.#drop(session, "gateway stopping")));
  }

  #sessionDeps(view: string | undefined): McpSessionDeps {
    return {
      ...this.#options.session,
      ...(view === undefined ? {} : this.#options.views?.get(view)),
      onRecord: (session, record) => this.#onRecord(session, record),
      // Answered once its grants are gone: a client that ended a session finds them ended.
      onEnded: async (session) => {
        const id = session.sessionId;
        if (id === undefined) return;
        this.#options.store.remove(id);
        this.#departed.delete(id);
        await this.#options.session.ports.approvals.forgetThreads(
          sessionThreads(id, session.record?.threads),
        );
      },
      onClosed: (session) => this.#onClosed(session),
      isSession: (id) => this.isSession(id),
      claimThread: (threadId, principal) => this.claimThread(threadId, principal),
    };
  }

  /** Whether an MCP session, held here or by another replica, has this id. */
  async isSession(id: string): Promise<boolean> {
    return this.#sessions.has(id) || (await this.#options.store.get(id)) !== undefined;
  }

  /** Binds a thread a client named to its principal (a new binding ends the thread's old grants). */
  claimThread(threadId: string, principal: string): Promise<ThreadClaim> {
    return this.#options.store.claimThread(threadId, principal, () =>
      this.#options.session.ports.approvals.forgetThreads([threadId]),
    );
  }

  /** A new session is held from the moment its transport assigned the id (its first record). */
  #onRecord(session: McpSession, record: SessionRecord): void {
    if (session.closed) return;
    if (!this.#sessions.has(record.sessionId)) session.lastSeen = this.#options.now();
    this.#sessions.set(record.sessionId, session);
    this.#stored.set(record.sessionId, this.#options.now());
    this.#options.store.put(record);
  }

  #onClosed(session: McpSession): void {
    const id = session.sessionId;
    if (id === undefined) return;
    if (this.#sessions.get(id) === session) this.#sessions.delete(id);
    this.#stored.delete(id);
  }

  /** Keeps the stored record from expiring while the session is in use. */
  #refreshRecord(session: McpSession): void {
    const record = session.record;
    if (!record) return;
    const last = this.#stored.get(record.sessionId) ?? 0;
    if (this.#options.now() - last < this.#options.idleTtlMs / 3) return;
    this.#stored.set(record.sessionId, this.#options.now());
    this.#options.store.put(record);
  }

  async #restore(sessionId: string): Promise<McpSession | undefined> {
    const record = await this.#options.store.get(sessionId);
    if (!record) return undefined;
    this.#makeRoomFor(record.principal ?? ANONYMOUS.name);
    this.#makeRoom();
    const session = await McpSession.restore(this.#sessionDeps(record.view), record);
    session.lastSeen = this.#options.now();
    this.#sessions.set(sessionId, session);
    this.#departed.delete(sessionId);
    // Stored again: the record outlives the use it sees here (and tells who let it go that it lives).
    this.#stored.set(sessionId, this.#options.now());
    this.#options.store.put(record);
    this.#options.logger.info({ sessionId }, "rebuilt a session started on another replica");
    return session;
  }

  /** A principal at its limit makes room by closing its own least recently used idle session. */
  #makeRoomFor(principal: string): void {
    let held = 0;
    let oldest: McpSession | undefined;
    for (const session of this.#sessions.values()) {
      if (session.principal !== principal) continue;
      held += 1;
      if (session.openResponses > 0) continue;
      if (!oldest || session.lastSeen < oldest.lastSeen) oldest = session;
    }
    if (held < this.#options.maxSessionsPerClient) return;
    if (!oldest) throw new ClientSessionsFull(principal, this.#options.maxSessionsPerClient);
    void this.#drop(oldest, "evicted to make room for its client's new session", { departs: true });
  }

  #makeRoom(): void {
    if (this.#sessions.size < this.#options.maxSessions) return;
    let oldest: McpSession | undefined;
    for (const session of this.#sessions.values()) {
      if (session.openResponses > 0) continue;
      if (!oldest || session.lastSeen < oldest.lastSeen) oldest = session;
    }
    if (!oldest) throw new SessionsFull(this.#options.maxSessions);
    void this.#drop(oldest, "evicted to make room", { departs: true });
  }

  /** `departs`: let go of while it may live on; its grants are forgotten once it expired. */
  async #drop(session: McpSession, why: string, options: { departs?: boolean } = {}): Promise<void> {
    const id = session.sessionId;
    if (id !== undefined && this.#sessions.get(id) === session) this.#sessions.delete(id);
    if (id !== undefined) this.#stored.delete(id);
    if (id !== undefined && options.departs) this.#depart(id, session);
    this.#options.logger.debug({ sessionId: id, why }, "closing session");
    await session.close().catch(() => undefined);
  }

  #depart(sessionId: string, session: McpSession): void {
    this.#departed.delete(sessionId);
    this.#departed.set(sessionId, {
      threads: sessionThreads(sessionId, session.record?.threads),
      lastSeen: session.lastSeen,
    });
    // Bounded: past the cap the oldest is forgotten now rather than tracked (the safe side).
    while (this.#departed.size > this.#options.maxSessions) {
      const [oldestId, oldest] = this.#departed.entries().next().value as [string, { threads: string[] }];
      this.#departed.delete(oldestId);
      void this.#options.session.ports.approvals.forgetThreads(oldest.threads);
    }
  }
}
