// This daemon among the others sharing the store (docs/cluster.md, "Faults"): its heartbeat in
// `daemons` (which also measures the database's clock and watches the others'), the LISTEN that
// hears the others' NOTIFY, and the catch-up either of them triggers. Leaving on purpose
// deletes the daemon's row, so the others forget it at once. The heartbeat has a connection of
// its own (issue 21): it neither waits behind this daemon's transactions nor ends their batch,
// and it takes no part in the global order.
import { SQL } from "bun";
import { errorMessage } from "../../errors.ts";
import { createLog } from "../../log.ts";
import { mark, TRACING } from "../../trace.ts";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { DEAD_AFTER_MS, type SharedStore, type VersionProtocol } from "../store.ts";
import { CONNECT_TIMEOUT_S, unavailable } from "./connection.ts";
import { DB_NOW } from "./dialect.ts";
import type { PgDriver } from "./driver.ts";

const log = createLog("store");

/** How often a daemon heartbeats its row (others call it dead after DEAD_AFTER_MS). */
const HEARTBEAT_MS = 1000;
/**
 * Row bodies' "journal" NOTIFYs go at most this often: every commit meanwhile shares the next
 * one. Each NOTIFY wakes every daemon's listener (work on the server and on each of them), so
 * one per commit would cost the team more than the commits; a watcher elsewhere hears of a
 * counter's change at most this much later. 10 ms (100 a second per busy daemon, each heard by
 * every daemon) cost three daemons on one machine 4–13% of their counters' throughput
 * (docs/cluster.md, "Scaling out"); at 50 ms it no longer shows.
 */
const JOURNAL_NOTIFY_EVERY_MS = 50;
/**
 * How long a daemon keeps hearing the journal's channel after its last change-feed watcher left
 * (a dashboard asks again right after each answer; a live log too): then its listener is not
 * woken by every change the others record.
 */
const JOURNAL_HEARD_AFTER_MS = 30_000;

export class Peers implements SharedStore {
  /** This daemon's name among those sharing the store, new at every start. */
  readonly daemonId = randomBytes(8).toString("hex");
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private listener: SQL | undefined;
  /** The heartbeat's own connection (Bun's client reconnects it by itself), and whether a beat is on it. */
  private beater: SQL | undefined;
  private beating = false;
  /** A "journal" NOTIFY is on its way, and whether another is due after it. */
  private notifying = false;
  private notifyAgain = false;
  private poked = false;
  /** Its own channel is heard (the LISTEN in place): its heartbeat says so, and the others send it what concerns it alone there. */
  private ownHeard = false;
  /** A check for change-feed watchers is on its way (pokeWatchers), and whether another is due after it. */
  private checking = false;
  private checkAgain = false;
  /** The live daemons at the last heartbeat, as one string to compare. */
  private liveDaemons = "";
  /** Those of them that hear their own channel, the same way. */
  private hearingOwnIds = "";
  /** The journal's channel: heard (once the promise resolves), and since when nobody here watches. */
  private journal: { heard: Promise<{ unlisten(): Promise<void> }>; idleSince: number } | null = null;
  /** The last UNLISTEN of it: a LISTEN after it waits for it, so that it cannot undo the LISTEN. */
  private unheard: Promise<void> = Promise.resolve();

  constructor(
    private readonly driver: PgDriver,
    private readonly url: string,
    /** The database's clock minus this machine's, in ms: measured at open, then at every heartbeat. */
    public clockOffsetMs: number,
  ) {}

  async attach(protocol: VersionProtocol): Promise<void> {
    this.driver.sync = protocol;
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat().catch((err: unknown) => log.debug(`heartbeat failed: ${errorMessage(err)}`)), HEARTBEAT_MS);
    this.heartbeat.unref?.();
    // Bun's client re-subscribes a LISTEN by itself after its connection drops; a NOTIFY sent
    // meanwhile is lost, which the version check at the next transaction makes up for.
    this.listener = new SQL(this.url, { max: 1, connectionTimeout: CONNECT_TIMEOUT_S });
    await this.listener.listen(protocol.channel, (payload: string) => this.heard(protocol, payload));
    await this.listener.listen(protocol.ownChannel(this.daemonId), (payload: string) => this.heard(protocol, payload));
    // Its own channel heard: a heartbeat says so now, and from then on the others send what
    // concerns this daemon alone there (docs/cluster.md, "Who hears a NOTIFY").
    this.ownHeard = true;
    await this.beat();
    this.driver.onRowsCommitted = () => this.rowsCommitted(protocol);
  }

  /** Another daemon's NOTIFY, on either channel. */
  private heard(protocol: VersionProtocol, payload: string): void {
    const [from, what, to] = payload.split(" ");
    if (from === this.daemonId) return;
    if (TRACING) mark(`heard ${what}`);
    if (what === "journal") {
      protocol.journalMoved = true;
      this.pokeWatchers();
      return;
    }
    const tables = protocol.tablesIn(what);
    if (tables) {
      protocol.wrote(tables); // the next BEGIN reads their deltas ahead
      this.pokeFor(protocol, tables, protocol.targetsIn(to));
    } else {
      this.poke(true);
      this.pokeWatchers();
    }
  }

  /**
   * Hears the journal's channel from now on (docs/cluster.md, "Who hears a NOTIFY"): resolves
   * once the LISTEN is in place, so a watcher that looks after it hears every change committed
   * after its look. What was recorded before goes unheard: the next transaction in the global
   * order catches the journal up (journalMoved), and the watcher's look reads it.
   */
  hearJournal(): Promise<void> {
    const protocol = this.driver.sync;
    const listener = this.listener;
    if (!protocol || !listener) return Promise.resolve();
    if (this.journal) this.journal.idleSince = 0;
    else {
      const heard = this.unheard
        .then(() => listener.listen(protocol.journalChannel, (payload: string) => this.heard(protocol, payload)))
        .then(
          (sub) => {
            protocol.journalMoved = true; // what was recorded before it went unheard
            return sub;
          },
          (err: unknown) => {
            if (this.journal === journal) this.journal = null; // the next watcher tries again
            log.debug(`could not listen for the others' recorded changes: ${errorMessage(err)}`);
            throw unavailable(); // each watcher's call that waited for it: retryable, and it changed nothing
          },
        );
      const journal = (this.journal = { heard, idleSince: 0 });
    }
    return this.journal.heard.then(() => undefined);
  }

  /** At each heartbeat: stops hearing the journal's channel a while after the last watcher here left. */
  private quietJournal(): void {
    const journal = this.journal;
    if (!journal || !this.driver.sync) return;
    if (this.driver.sync.hooks.watchingJournal()) {
      journal.idleSince = 0;
      return;
    }
    const now = Date.now();
    if (journal.idleSince === 0) journal.idleSince = now;
    if (now - journal.idleSince < JOURNAL_HEARD_AFTER_MS) return;
    this.journal = null;
    this.unheard = journal.heard.then((sub) => sub.unlisten()).catch((err: unknown) => log.debug(`stopping to hear the journal's channel failed: ${errorMessage(err)}`));
  }

  /**
   * Row bodies here wrote the journal, in the shared order (docs/cluster.md, "Scaling out"):
   * they moved no version and sent no NOTIFY in their transaction (a notifying transaction
   * holds a database-wide lock through its commit, which would serialize every commit again).
   * So: this daemon's next transaction catches the journal up (its own watchers that a change
   * matched were woken after the commit: Journal.record), and the others are told once, outside
   * any transaction, on the heartbeat's connection; commits meanwhile share one more NOTIFY.
   */
  private rowsCommitted(protocol: VersionProtocol): void {
    protocol.journalMoved = true;
    if (this.notifying) {
      this.notifyAgain = true;
      return;
    }
    this.notifying = true;
    const sent = this.side()
      .unsafe("SELECT pg_notify($1, $2)", [protocol.journalChannel, `${this.daemonId} journal`])
      .catch((err: unknown) => log.debug(`a journal NOTIFY failed (the others catch up at their next call): ${errorMessage(err)}`));
    const spaced = Bun.sleep(JOURNAL_NOTIFY_EVERY_MS);
    void Promise.all([sent, spaced]).then(() => {
      this.notifying = false;
      if (this.notifyAgain && !this.driver.closed) {
        this.notifyAgain = false;
        this.rowsCommitted(protocol);
      }
    });
  }

  /**
   * Another daemon wrote (or one came or went): one catch-up transaction, unless one is already
   * waiting its turn. After a NOTIFY only when a call here is blocked, since the change may
   * answer it; otherwise the next call here catches up first anyway, and N daemons do not each
   * run a transaction for every write of every other. A daemon leaving is caught up with at
   * once: the expiries it armed may now be this daemon's to fire.
   */
  private poke(notified = false): void {
    const sync = this.driver.sync;
    if (this.poked || this.driver.closed || !sync) return;
    if (notified && !sync.hooks.waiting()) return;
    this.poked = true;
    this.driver
      .enqueue(() => {
        this.poked = false;
        return this.driver.runTx(function* () {});
      })
      .catch((err: unknown) => log.debug(`a catch-up after another daemon's change failed: ${errorMessage(err)}`));
  }

  /**
   * Another daemon's transaction in the global order committed and wrote `tables`. A call
   * blocked here is answered by a grant another daemon made it (`grants`), by its place taken
   * away (`waiters`), or, a change-feed watcher, by a change recorded (`journal`); a daemon's
   * coming or going (`daemons`) moves places too. Whatever else was written answers none: the
   * version moved, so this daemon's next transaction catches it up, and nothing runs now. (It
   * used to catch up at once after every commit while any call here was blocked: with a worker
   * blocked on every daemon, each line body anywhere cost every other daemon a transaction in
   * the global order.) `targets`: the daemons whose places or grants it wrote, when the writer
   * named them; a grant or a place of another daemon answers nothing here (null: not named).
   */
  private pokeFor(protocol: VersionProtocol, tables: readonly string[], targets: readonly string[] | null): void {
    if (protocol.answers(tables) && (targets === null || targets.includes(this.daemonId))) this.poke(true);
    if (tables.includes("*") || tables.includes("journal")) this.pokeWatchers();
  }

  /**
   * Another daemon recorded changes: only a change-feed watcher here may want them now (no
   * other blocked call is answered by a row body's write: those run only where nobody is in
   * line; a line body's grants and places are pokeFor's). So a read in the shared order wakes
   * the watchers here that one of them matches (ClusterHooks.journalWanted), and row bodies of
   * every daemon go on meanwhile; only a daemon far behind catches up in the exclusive order.
   * One read at a time; changes committed while it runs are read by one more after it.
   */
  private pokeWatchers(): void {
    const sync = this.driver.sync;
    if (this.poked || this.driver.closed || !sync || !sync.hooks.watchingJournal()) return;
    if (this.checking) {
      this.checkAgain = true;
      return;
    }
    this.checking = true;
    this.driver
      .tx(() => sync.hooks.journalWanted(), { key: "journal:" })
      .then(
        (wanted) => wanted && this.poke(),
        (err: unknown) => {
          log.debug(`a check for change-feed watchers failed (caught up in the global order instead): ${errorMessage(err)}`);
          this.poke();
        },
      )
      .finally(() => {
        this.checking = false;
        if (this.checkAgain) {
          this.checkAgain = false;
          this.pokeWatchers();
        }
      });
  }

  /**
   * The heartbeat, which also watches the others': a daemon that fell silent (or came) changes
   * which blocked calls count as attached, though no transaction wrote anything, so the lines
   * are reloaded then too.
   */
  private async beat(): Promise<void> {
    if (this.driver.closed || this.beating) return; // one at a time: a slow one is not piled on
    this.beating = true;
    this.quietJournal();
    try {
      const sql = this.side();
      const sent = Date.now();
      // The daemon's row, and its machine's (which outlives it: see migration 004).
      const [beat] = (await sql.unsafe(
        `WITH d AS (INSERT INTO daemons (id, host, pid, started_at, seen_at, hears_own) VALUES ($1, $2, $3, ${DB_NOW}, ${DB_NOW}, $4) ` +
          `ON CONFLICT (id) DO UPDATE SET seen_at = ${DB_NOW}, hears_own = excluded.hears_own RETURNING seen_at), ` +
          `h AS (INSERT INTO hosts (host, seen_at) SELECT $2, seen_at FROM d ON CONFLICT (host) DO UPDATE SET seen_at = excluded.seen_at) ` +
          `SELECT seen_at FROM d`,
        [this.daemonId, hostname(), process.pid, this.ownHeard],
      )) as { seen_at: string }[];
      // The database's clock, read halfway through the round trip (on loopback, within a ms).
      this.clockOffsetMs = Math.round(Number(beat!.seen_at) - (sent + Date.now()) / 2);
      const rows = (await sql.unsafe(`SELECT id, hears_own FROM daemons WHERE seen_at >= ${DB_NOW} - $1 ORDER BY id`, [DEAD_AFTER_MS])) as { id: string; hears_own: boolean }[];
      const live = rows.map((r) => r.id).join(" ");
      const hearing = rows.filter((r) => r.hears_own).map((r) => r.id);
      if (hearing.join(" ") !== this.hearingOwnIds) {
        this.hearingOwnIds = hearing.join(" ");
        if (this.driver.sync) this.driver.sync.hearingOwn = new Set(hearing);
      }
      if (live !== this.liveDaemons) {
        const now = new Set(rows.map((r) => r.id));
        const left = this.liveDaemons !== "" && this.liveDaemons.split(" ").some((id) => !now.has(id));
        this.liveDaemons = live;
        // The next transaction in the global order judges every place again and brings each
        // cache up by its delta. At once only when a daemon left: its blocked calls' places
        // start their grace, its grants go back, and the expiries it armed (a lock it took with
        // nobody in line) are now the others' to fire. A daemon coming (or coming back) needs
        // nothing of the others before their next transaction.
        this.driver.sync?.livenessMoved();
        if (left) this.poke();
      }
    } finally {
      this.beating = false;
    }
  }

  turn(key: string): number {
    const ids = this.liveDaemons.split(" ").filter(Boolean);
    const me = ids.indexOf(this.daemonId);
    if (me < 0 || ids.length < 2) return 0;
    return (me + fnv1a(key)) % ids.length;
  }

  /** The heartbeat's connection, which the row bodies' journal NOTIFYs share. */
  private side(): SQL {
    this.beater ??= new SQL(this.url, { max: 1, connectionTimeout: CONNECT_TIMEOUT_S });
    return this.beater;
  }

  /** Stops the heartbeat; if attached, deletes this daemon's row: the others forget it (its waiters' places) at once. */
  async leave(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (!this.driver.sync) return;
    await this.beater?.unsafe("DELETE FROM daemons WHERE id = $1", [this.daemonId]).catch(() => undefined);
  }

  async stopListening(): Promise<void> {
    await this.listener?.close({ timeout: 0 }).catch(() => undefined);
    await this.beater?.close({ timeout: 0 }).catch(() => undefined);
  }
}

/** FNV-1a, 32 bits: a key's place in the turns (SharedStore.turn), the same on every daemon. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
