import type { BundleHash, TenantId } from "../../protocol/index.js";
import type { ActiveHead } from "../active-cache.js";
import { type CodeRow, type HeadRow, toActiveHead } from "../store-rows.js";
import type { Db, PostgresQueries } from "./postgres-queries.js";

/**
 * What the PostgreSQL store's active-bundle cache reads: a tenant's head (its active version with its
 * rollout and shadow candidates, in one query), a bundle's code by hash, and the store's generation that
 * the change feed polls while its notification connection is down.
 */
export class PostgresHeadQueries {
  readonly #q: PostgresQueries;

  constructor(queries: PostgresQueries) {
    this.#q = queries;
  }

  async head(db: Db, tenantId: TenantId): Promise<HeadRow | undefined> {
    const result = await db.query<HeadRow>(this.#headSql(), [tenantId]);
    return result.rows[0];
  }

  /**
   * The head and, in the same round trip, the code of each of its versions whose hash is not in `known`:
   * a pick-up of a version this host has not run yet costs one query, not two.
   */
  async headAndCode(
    db: Db,
    tenantId: TenantId,
    known: readonly BundleHash[],
  ): Promise<(HeadRow & { codes: (CodeRow & { hash: BundleHash })[] | null }) | undefined> {
    const s = this.#q.schemaPrefix;
    const result = await db.query<HeadRow & { codes: (CodeRow & { hash: BundleHash })[] | null }>(
      `WITH h AS (${this.#headSql()})
       SELECT h.*, (SELECT json_agg(json_build_object('hash', b.hash, 'code', b.code, 'source_map', b.source_map,
                                                      'manifest', b.manifest, 'bytes', b.bytes))
                      FROM ${s}bundles b
                     WHERE b.hash IN (h.hash, h.rollout_hash, h.shadow_hash) AND NOT (b.hash = ANY($2::text[]))) AS codes
         FROM h`,
      [tenantId, known],
    );
    return result.rows[0];
  }

  #headSql(): string {
    return headSql(this.#q.schemaPrefix, "t.active_version", true);
  }

  async code(db: Db, hash: BundleHash): Promise<CodeRow | undefined> {
    const result = await db.query<CodeRow>(
      `SELECT code, source_map, manifest, bytes FROM ${this.#q.schemaPrefix}bundles WHERE hash = $1`,
      [hash],
    );
    return result.rows[0];
  }

  /** Moves whenever an active version changes: the fallback's cheap staleness check. */
  async generation(db: Db): Promise<number> {
    const result = await db.query<{ generation: number }>(`SELECT generation FROM ${this.#q.schemaPrefix}store_state`);
    return result.rows[0]?.generation ?? 0;
  }
}

/**
 * A tenant's head ($1) as one row (`HeadRow`): `active` is the SQL of its active version, `t.active_version`
 * or a parameter for a statement that is switching it; `rollout` false for a switch, which ends any rollout.
 */
function headSql(s: string, active: string, rollout: boolean): string {
  return `SELECT v.version, v.bundle_hash AS hash, v.config,
            r.version AS rollout_version, rv.bundle_hash AS rollout_hash, rv.config AS rollout_config,
            r.basis_points AS rollout_bp, sh.version AS shadow_version, sv.bundle_hash AS shadow_hash,
            sv.config AS shadow_config
       FROM ${s}tenants t JOIN ${s}versions v ON v.tenant_id = t.id AND v.version = ${active}
         LEFT JOIN ${s}rollouts r ON r.tenant_id = t.id AND ${rollout ? "true" : "false"}
         LEFT JOIN ${s}versions rv ON rv.tenant_id = t.id AND rv.version = r.version
         LEFT JOIN ${s}shadows sh ON sh.tenant_id = t.id
         LEFT JOIN ${s}versions sv ON sv.tenant_id = t.id AND sv.version = sh.version
       WHERE t.id = $1`;
}

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7_900;

/** The channel beside the store's (`channel`) that carries each change's head. */
export function headChannelOf(channel: string): string {
  return `${channel}${HEAD_CHANNEL_SUFFIX}`;
}

const HEAD_CHANNEL_SUFFIX = ":head";

/**
 * What a change of tenant $1's head NOTIFYs, `channel` being the parameter that holds the store's channel:
 * on the head channel the head itself (`readChange` reads it), so a host that has the code of its versions
 * serves it without a read, or the bare tenant id when the head (its configs) would not fit; then on the
 * store's channel the bare tenant id, which is all a host of an earlier release reads (it re-reads the
 * head), so hosts of two releases can share a store during a rolling deploy. Both are sent on commit, in
 * this order, one after the other (PgChangeFeed skips the second when it had the first).
 */
export function notifyHeadSql(s: string, channel: string, active = "t.active_version", rollout = true): string {
  const head = `(SELECT CASE WHEN octet_length(p) <= ${MAX_PAYLOAD_BYTES} THEN p ELSE $1::text END
             FROM (SELECT json_build_object('tenant', $1::text,
                                            'head', (SELECT row_to_json(h) FROM (${headSql(s, active, rollout)}) h))::text AS p) n)`;
  return `SELECT pg_notify(${channel} || '${HEAD_CHANNEL_SUFFIX}', ${head}), pg_notify(${channel}, $1::text)`;
}

/** A notified change: the tenant, and its head when the payload carried it. */
export interface HeadChange {
  readonly tenantId: TenantId;
  readonly head: ActiveHead | undefined;
}

/** Reads a change's payload: a bare tenant id, or `notifyHeadSql`'s JSON; undefined when it is neither. */
export function readChange(payload: string): HeadChange | undefined {
  if (!payload.startsWith("{")) return { tenantId: payload as TenantId, head: undefined };
  try {
    const { tenant, head } = JSON.parse(payload) as { tenant: TenantId; head: HeadRow | null };
    return { tenantId: tenant, head: head === null ? undefined : toActiveHead(head, tenant) };
  } catch {
    return undefined;
  }
}
