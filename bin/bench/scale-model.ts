// The scale phase's model (docs/benchmarks.md "Scale"): from where each command's units landed (key-loads.ts),
// the hottest key value of the table and of each index per exchange or per session, and the rate of one bot
// that takes that key to DynamoDB's per-key limits.
import { TABLE_SCHEMA } from '../../lib/table-schema';
import type { KeyLoad } from './key-loads';
import { round } from './stats';

/** DynamoDB's most for one partition key value, per second (table and each index alike). */
export const KEY_WCU_PER_S = 1000;
export const KEY_RCU_PER_S = 3000;

/** The hottest key family of a table or index, one way (writes or reads), per exchange or per session. */
export interface HotKey {
  /** The key's shape, ids as placeholders (`BOT#<bot>`, `BOT#<bot>#<n>`). */
  key: string;
  /** Units per exchange (or session) on one key value of the family: the family's units ÷ its key values. */
  units: number;
  /** How many key values of the family the window touched. */
  key_values: number;
  /** The most units on any one of them (per exchange or session). */
  max_units: number;
}

export interface WindowLoad {
  /** Per table or index (`table`, `gsi1`, ...): its hottest shared key by write units and by read units. */
  keys: Record<string, { write: HotKey | null; read: HotKey | null }>;
  /**
   * What one bot can do per second before a shared key reaches 1,000 WCU/s or 3,000 RCU/s, and which key; null
   * when the window touched no shared key.
   */
  max_per_s: number | null;
  limited_by: string;
}

/**
 * A key's shape: each `#` segment that is a label (capitals) stays, a number becomes `<n>`, an id after a label
 * becomes that label in lower case (`BOT#9f…#EXT#a1` → `BOT#<bot>#EXT#<ext>`).
 */
export function keyShape(key: string): string {
  const parts = key.split('#');
  return parts
    .map((p, i) => {
      if (/^[A-Z_]+$/.test(p)) return p;
      if (/^\d+$/.test(p)) return '<n>';
      const label = parts[i - 1];
      return label && /^[A-Z_]+$/.test(label) ? `<${label.toLowerCase()}>` : '<id>';
    })
    .join('#');
}

/**
 * The window's load on shared keys: a key value that names no id of one conversation (its user, chat, external
 * id, socket) is shared by the bot's conversations. Keys of one conversation are left out: more conversations
 * spread them, and one conversation never nears a key's limit. Shared key values of one shape form a family
 * (the shards of a sharded key, or a single key), and the family's units spread evenly over the values it
 * touched: the load of one value at scale, where every value takes its share. With fewer conversations than
 * shards, fewer values are touched and each counts for more (the figure errs high).
 */
export function windowLoad(loads: KeyLoad[], count: number, ownedBy: (key: string) => boolean): WindowLoad {
  const targets = ['table', ...TABLE_SCHEMA.globalSecondaryIndexes.map((i) => i.indexName)];
  const keys: WindowLoad['keys'] = {};
  let limit = { perS: Infinity, by: 'no shared key' };
  for (const target of targets) {
    const values = new Map<string, { wcu: number; rcu: number }>();
    for (const l of loads) {
      if (l.target !== target || ownedBy(l.key)) continue;
      const v = values.get(l.key) ?? { wcu: 0, rcu: 0 };
      v.wcu += l.wcu;
      v.rcu += l.rcu;
      values.set(l.key, v);
    }
    const families = new Map<string, { wcu: number; rcu: number; values: number; maxW: number; maxR: number }>();
    for (const [key, v] of values) {
      const shape = keyShape(key);
      const f = families.get(shape) ?? { wcu: 0, rcu: 0, values: 0, maxW: 0, maxR: 0 };
      f.wcu += v.wcu;
      f.rcu += v.rcu;
      f.values += 1;
      f.maxW = Math.max(f.maxW, v.wcu);
      f.maxR = Math.max(f.maxR, v.rcu);
      families.set(shape, f);
    }
    const hot = (units: 'wcu' | 'rcu'): HotKey | null => {
      let best: HotKey | null = null;
      for (const [key, f] of families) {
        const per = f[units] / f.values / count;
        if (per > 0 && (!best || per > best.units)) best = { key, units: per, key_values: f.values, max_units: (units === 'wcu' ? f.maxW : f.maxR) / count };
      }
      return best && { ...best, units: round(best.units, 4), max_units: round(best.max_units, 4) };
    };
    const write = hot('wcu');
    const read = hot('rcu');
    keys[target] = { write, read };
    for (const [key, f] of families) {
      const perS = Math.min(KEY_WCU_PER_S / (f.wcu / f.values / count), KEY_RCU_PER_S / (f.rcu / f.values / count));
      if (perS < limit.perS) limit = { perS, by: `${target} ${key} (${KEY_WCU_PER_S / (f.wcu / f.values / count) <= perS ? 'writes' : 'reads'})` };
    }
  }
  return { keys, max_per_s: Number.isFinite(limit.perS) ? Math.floor(limit.perS) : null, limited_by: limit.by };
}
