// Which protocol era each request was served in, counted since start, in all and per client
// (airlock/status's `eras` and `eras_by_client`): what shows, from the daemon's side, that Claude
// Code speaks 2026-07-28 to us while our own hooks and CLI speak 2025. A client is its User-Agent
// header, cut to a bounded length; a daemon keeps at most a bounded number of them, so a caller
// that varies its User-Agent cannot grow the table.
import type { Era } from "./modern.ts";

const MAX_CLIENTS = 32;
const MAX_CLIENT_CHARS = 100;
export const OTHER_CLIENTS = "(other)";
export const NO_CLIENT = "(none)";

type Counts = Record<Era, number>;
const zero = (): Counts => ({ "2025": 0, "2026-07-28": 0 });

export class EraTally {
  readonly total: Counts = zero();
  private readonly byClient = new Map<string, Counts>();

  count(era: Era, headers: Headers | undefined): void {
    this.total[era]++;
    const agent = headers?.get("user-agent")?.trim().slice(0, MAX_CLIENT_CHARS) || NO_CLIENT;
    let c = this.byClient.get(agent);
    if (!c) {
      const key = this.byClient.size < MAX_CLIENTS - 1 ? agent : OTHER_CLIENTS;
      c = this.byClient.get(key);
      if (!c) this.byClient.set(key, (c = zero()));
    }
    c[era]++;
  }

  /** What airlock/status shows. */
  view(): { eras: Counts; eras_by_client: Record<string, Counts> } {
    const byClient: Record<string, Counts> = {};
    for (const [k, v] of this.byClient) byClient[k] = { ...v };
    return { eras: { ...this.total }, eras_by_client: byClient };
  }
}
