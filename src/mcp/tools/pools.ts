// Pool tools (the machine-wide heavy-work budget): acquire_slot, release_slot, renew_slot,
// list_pools, configure_pool.
import * as v from "valibot";
import type { Kernel } from "../../domain/kernel.ts";
import { DEFAULT_POOL, DEFAULT_SLOT_TTL_MS, type SlotResult } from "../../domain/pools/index.ts";
import { holderWire, livePools, queuedWire } from "../../domain/snapshot.ts";
import { clampedSeconds, MAX_ID_LENGTH, text, truncated, ttlArgs, ttlSeconds, whole } from "./args.ts";
import { compact, DEADLOCK_NOTE, defineTool, inSeconds, TASK_WAIT_NOTE } from "./define.ts";

export const DEFAULT_SLOT_TTL_SECONDS = DEFAULT_SLOT_TTL_MS / 1000;
const MAX_CAPACITY = 1024; // far beyond any machine's cores; a typo like 1e9 is refused
const MAX_OFFER_SECONDS = 3600;
const MAX_PID = 2 ** 31 - 1;
const RETRY_WITH = (token: string) =>
  `keep working; call acquire_slot again with wake_token=${token} (wait_seconds up to 50 to block) to claim your turn`;

const ms = (s: number | undefined) => (s === undefined ? undefined : s * 1000);
const pool = text("pool", `The pool's name. Default \`${DEFAULT_POOL}\`.`, MAX_ID_LENGTH);
const slotToken = text("slot_token", "The slot_token from acquire_slot (or a queued request's wake_token, to withdraw it).", 64);

function slotResult(k: Kernel, r: SlotResult) {
  if (r.granted) {
    return compact({
      granted: true,
      slot_token: r.token,
      pool: r.pool,
      weight: r.weight,
      fence: r.fence,
      expires_in_seconds: r.expiresAt === null ? undefined : inSeconds(k, r.expiresAt),
      bound_pid: r.pid,
    });
  }
  return compact({
    granted: false,
    pool: r.pool,
    capacity: r.capacity,
    in_use: r.inUse,
    queue_position: r.position,
    wake_token: r.wakeToken,
    holders: r.holders.map(holderWire),
    ahead: r.ahead.map((q) => {
      const { state: _s, blocked: _b, offer_expires_in_seconds: _o, ...rest } = queuedWire(q, k.clock.now());
      return rest;
    }),
    retry_with: r.wakeToken === undefined ? undefined : RETRY_WITH(r.wakeToken),
    deadlock: r.deadlock,
  });
}

export const poolTools = [
  defineTool({
    name: "acquire_slot",
    title: "Take a slot for heavy work",
    blocking: true,
    description:
      "Take a slot in a machine-wide pool before heavy work: builds, test suites, package installs, benchmarks, " +
      "anything that loads every core or a lot of memory. Several agents share one machine; the pool (default " +
      "`heavy`, capacity 1 unless configured) lets only that many heavy jobs run at once so they do not thrash. " +
      "Granted: run your job, then release_slot with slot_token. Queued: you get wake_token and your place; your " +
      "request STAYS in line after this call returns, so keep doing light work (editing, reading) and call " +
      "acquire_slot again with wake_token from time to time, or with wait_seconds (up to 50) to block; with the MCP tasks " +
      "extension, one acquire_slot(..., wait_seconds: 1800) keeps your place and tells you when it is your turn. When capacity " +
      "frees while you are away it is *offered* to you for the pool's offer_seconds (default 30): your next call with " +
      "the wake_token claims it. Miss the window and you are paused; your next call puts you back at the tail. " +
      "Pass pid (your job's process) to bind the slot to its process group: it is then released the moment the " +
      "group exits and never expires for age. Without pid it expires after ttl_seconds (default 900); renew_slot " +
      "for longer. From a shell, `airlock run -- CMD` does all of this for you." + TASK_WAIT_NOTE + DEADLOCK_NOTE,
    args: v.object({
      agent_id: text("agent_id", "Who you are, e.g. `agent:claude-session-abc`.", MAX_ID_LENGTH),
      pool: v.optional(pool, DEFAULT_POOL),
      reason: v.optional(text("reason", "What you will run, e.g. `cargo test`. Shown to the agents queued behind you.")),
      // No default here: a call that resumes a queued request without weight keeps the weight it queued with.
      weight: v.optional(
        whole(
          "weight",
          "Capacity units this job needs (>= 1). Default 1. With wake_token, leave it out (or pass the same): your request keeps the weight it queued with.",
          { min: 1, max: MAX_CAPACITY },
        ),
      ),
      wait_seconds: v.optional(
        clampedSeconds("wait_seconds", "Block up to this many seconds (0–50, or up to 3600 with the MCP tasks extension) for your turn. Default 0: answer at once (you stay queued)."),
        0,
      ),
      wake_token: v.optional(text("wake_token", "The wake_token from an earlier answer: claims your offer or keeps your place.", 64)),
      ...ttlArgs("How long the slot lives unless renewed or released, in seconds (> 0). Ignored with pid.", DEFAULT_SLOT_TTL_SECONDS),
      pid: v.optional(whole("pid", "A process of yours: the slot is held exactly as long as its process group.", { min: 1, max: MAX_PID })),
    }),
    async run(a, { kernel, signal }) {
      const r = await kernel.pools.acquire(
        {
          agentId: a.agent_id,
          pool: a.pool,
          reason: a.reason,
          weight: a.weight,
          waitMs: a.wait_seconds * 1000,
          wakeToken: a.wake_token,
          // Left out: a resumed request keeps its own, a new one gets DEFAULT_SLOT_TTL_MS.
          ttlMs: ms(ttlSeconds(a)),
          pid: a.pid,
        },
        signal,
      );
      return slotResult(kernel, r);
    },
    async handBack(r, _a, { kernel }) {
      if (r.granted === true && typeof r.slot_token === "string") await kernel.pools.release(r.slot_token);
    },
  }),

  defineTool({
    name: "release_slot",
    title: "Release a slot",
    description:
      "Release a slot as soon as the heavy work ends: the next agent in line gets it at once. Idempotent: releasing " +
      "again answers released:false; a token never issued answers released:false, unknown:true. A queued request's " +
      "wake_token withdraws the request instead.",
    args: v.object({ slot_token: slotToken }),
    async run(a, { kernel }) {
      if (await kernel.pools.release(a.slot_token)) return { released: true };
      return (await kernel.journal.mentionsToken("pool.", a.slot_token)) ? { released: false } : { released: false, unknown: true };
    },
  }),

  defineTool({
    name: "renew_slot",
    title: "Extend a slot",
    description:
      "Keep a slot past its ttl: it now expires ttl_seconds from now (default 900). With pid, bind it to that " +
      "process group instead (no expiry; released when the group exits).",
    args: v.object({
      slot_token: text("slot_token", "The slot_token from acquire_slot.", 64),
      ...ttlArgs("New lifetime from now, in seconds (> 0).", DEFAULT_SLOT_TTL_SECONDS),
      pid: v.optional(whole("pid", "Bind the slot to this process's group from now on.", { min: 1, max: MAX_PID })),
    }),
    async run(a, { kernel }) {
      const r = await kernel.pools.renew(a.slot_token, ttlSeconds(a, DEFAULT_SLOT_TTL_SECONDS)! * 1000, a.pid);
      if (!r.renewed) return r;
      return compact({ renewed: true, expires_in_seconds: r.expiresAt === null ? undefined : inSeconds(kernel, r.expiresAt), bound_pid: r.pid });
    },
  }),

  defineTool({
    name: "list_pools",
    title: "List pools",
    readOnly: true,
    description:
      "List every pool: capacity, in_use and offered (in weight units), how many requests are queued, its version " +
      "(for configure_pool), who holds slots and who waits, in order.",
    args: v.object({}),
    run(_a, { kernel }) {
      return kernel.ctx.readLines(() => livePools(kernel, kernel.clock.now()));
    },
  }),

  defineTool({
    name: "configure_pool",
    title: "Configure a pool",
    description:
      "Set a pool's capacity (and optionally offer_seconds), or create a new pool with expected_version 0. " +
      "Compare-and-set: pass the version list_pools showed; if someone changed it since, nothing changes and you get " +
      "the current version. Lowering capacity never revokes held slots; raising it serves the queue at once. Call " +
      "inspect_machine first to choose a capacity. author and reason are recorded.",
    args: v.object({
      pool,
      capacity: whole("capacity", "How many weight units may run at once (>= 1).", { min: 1, max: MAX_CAPACITY }),
      expected_version: whole("expected_version", "The version you read from list_pools; 0 to create a pool.", { min: 0 }),
      author: text("author", "Who is changing it.", MAX_ID_LENGTH),
      reason: text("reason", "Why, e.g. `16-core machine, builds use 4 cores each`."),
      offer_seconds: v.optional(
        truncated("offer_seconds", "How long freed capacity is held for an absent request (>= 1). Default 30.", { min: 1, max: MAX_OFFER_SECONDS }),
      ),
    }),
    run(a, { kernel }) {
      return kernel.pools.configure({
        pool: a.pool,
        capacity: a.capacity,
        expectedVersion: a.expected_version,
        author: a.author,
        reason: a.reason,
        offerSeconds: a.offer_seconds,
      });
    },
  }),
];
