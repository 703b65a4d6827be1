/**
 * Which migration files still have to run: files named `NNNN_name.sql`, run once each in
 * name order. A version the database has applied but no file carries (a newer service wrote
 * it) is reported, not an error, so an older replica can still start during a rollout.
 */

const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

export interface MigrationPlan {
  /** File names to run, in order. */
  pending: string[];
  /** Applied versions with no file here. */
  unknownApplied: string[];
}

export type MigrationPlanResult = { ok: true; plan: MigrationPlan } | { ok: false; error: string };

/** `files` is the directory listing (other files are ignored); `applied` the recorded versions. */
export function planMigrations(files: readonly string[], applied: readonly string[]): MigrationPlanResult {
  const sql = files.filter((file) => file.endsWith(".sql")).sort();
  const badName = sql.find((file) => !MIGRATION_FILE.test(file));
  if (badName !== undefined) {
    return {
      ok: false,
      error: `migration file ${badName} is not named NNNN_name.sql (four digits, then lower-case letters, digits and _); rename it`,
    };
  }
  const byVersion = new Map<string, string>();
  for (const file of sql) {
    const version = migrationVersion(file);
    const other = byVersion.get(version);
    if (other !== undefined) {
      return {
        ok: false,
        error: `migration files ${other} and ${file} share version ${version}; give each its own number`,
      };
    }
    byVersion.set(version, file);
  }
  const done = new Set(applied);
  return {
    ok: true,
    plan: {
      pending: sql.filter((file) => !done.has(migrationVersion(file))),
      unknownApplied: [...done].filter((version) => !byVersion.has(version)).sort(),
    },
  };
}

/** The version recorded for a file: its four leading digits, so renaming a file never reruns it. */
export function migrationVersion(file: string): string {
  return file.slice(0, 4);
}
