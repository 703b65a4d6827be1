-- Citation usage accounting (docs/reference-behavior.md §9 "Schema"), in Postgres types.
-- stage1_outputs and jobs mirror codex's memory_migrations/0001_memories.sql; times are Unix seconds.

CREATE TABLE stage1_outputs (
    thread_id TEXT PRIMARY KEY,
    source_updated_at BIGINT NOT NULL,
    raw_memory TEXT NOT NULL,
    rollout_summary TEXT NOT NULL,
    rollout_slug TEXT,
    generated_at BIGINT NOT NULL,
    usage_count INT NULL,
    last_usage BIGINT NULL,
    selected_for_phase2 INT NOT NULL DEFAULT 0,
    selected_for_phase2_source_updated_at BIGINT
);

CREATE INDEX idx_stage1_outputs_source_updated_at
    ON stage1_outputs (source_updated_at DESC, thread_id DESC);

-- The phase-2 ranking (§9 "How usage is consumed"), with SQLite's NULL ordering: a NULL
-- usage_count ranks as 0, below every counted row.
CREATE INDEX idx_stage1_outputs_usage_rank
    ON stage1_outputs (
        COALESCE(usage_count, 0) DESC,
        COALESCE(last_usage, source_updated_at) DESC,
        source_updated_at DESC,
        thread_id DESC
    );

CREATE TABLE jobs (
    kind TEXT NOT NULL,
    job_key TEXT NOT NULL,
    status TEXT NOT NULL,
    worker_id TEXT,
    ownership_token TEXT,
    started_at BIGINT,
    finished_at BIGINT,
    lease_until BIGINT,
    retry_at BIGINT,
    retry_remaining INT NOT NULL,
    last_error TEXT,
    input_watermark BIGINT,
    last_success_watermark BIGINT,
    PRIMARY KEY (kind, job_key)
);

CREATE INDEX idx_jobs_kind_status_retry_lease
    ON jobs (kind, status, retry_at, lease_until);

-- Exactly-once counting: a message's citations are counted in the same transaction that
-- records its id here, so a redelivered or republished message is counted at most once.
CREATE TABLE memory_processed_messages (
    message_id TEXT PRIMARY KEY,
    processed_at BIGINT NOT NULL
);

-- Messages that could not be counted: malformed ones at once, failing ones after the
-- bounded number of deliveries. Keyed by stream position so parking twice is harmless.
CREATE TABLE memory_parked_messages (
    stream TEXT NOT NULL,
    stream_sequence BIGINT NOT NULL,
    subject TEXT NOT NULL,
    message_id TEXT,
    error TEXT NOT NULL,
    deliveries INT NOT NULL,
    payload BYTEA NOT NULL,
    parked_at BIGINT NOT NULL,
    PRIMARY KEY (stream, stream_sequence)
);

CREATE INDEX idx_memory_parked_messages_stream_parked_at
    ON memory_parked_messages (stream, parked_at DESC, stream_sequence DESC);
