// Lock tools: lock_resource, unlock_resource, renew_lock, list_locks, lock_resources.
import * as v from "valibot";
import { secondsSince } from "../../domain/context.ts";
import type { AcquireResult } from "../../domain/locks.ts";
import type { Kernel } from "../../domain/kernel.ts";
import { clampedSeconds, MAX_ID_LENGTH, text, textList, ttlArgs, ttlSeconds } from "./args.ts";
import { compact, DEADLOCK_NOTE, defineTool, inSeconds, TASK_WAIT_NOTE } from "./define.ts";

export const DEFAULT_LOCK_TTL_SECONDS = 900; // v2's default: long enough for an npm install
const RETRY_WITH = (token: string) => `call lock_resource again with wake_token=${token} to keep your place in line`;

const RETRY_MANY_WITH = (token: string) =>
  `call lock_resources again with the same names and wake_token=${token} to keep your place in line`;

/** wait_seconds and wake_token, shared by the two blocking lock tools. */
const waitArgs = (wait: string, wake: string) => ({
  wait_seconds: v.optional(clampedSeconds("wait_seconds", wait), 0),
  wake_token: v.optional(text("wake_token", wake, 64)),
});

/** The wire arguments both blocking lock tools share, as the domain's request. */
function lockRequest(a: { agent_id: string; ttl_seconds?: number | undefined; ttl_minutes?: number | undefined; wait_seconds: number; wake_token?: string | undefined }) {
  return { agentId: a.agent_id, ttlMs: ttlSeconds(a, DEFAULT_LOCK_TTL_SECONDS)! * 1000, waitMs: a.wait_seconds * 1000, wakeToken: a.wake_token };
}

const agentId = (what: string) => text("agent_id", what, MAX_ID_LENGTH);

function acquireResult(k: Kernel, r: AcquireResult) {
  if (r.locked) return { locked: true, lock_token: r.token, expires_in_seconds: inSeconds(k, r.expiresAt), fence: r.fence };
  return compact({
    locked: false,
    held_by: r.heldBy,
    expires_in_seconds: inSeconds(k, r.expiresAt),
    wake_token: r.wake?.token,
    queue_position: r.wake?.position,
    retry_with: r.wake ? RETRY_WITH(r.wake.token) : undefined,
    deadlock: r.deadlock,
  });
}

export const lockTools = [
  defineTool({
    name: "lock_resource",
    title: "Lock a named resource",
    blocking: true,
    description:
      "Take an exclusive lock on a named resource before touching something another agent might touch at the same time " +
      "(a file, `npm install`, database migrations). Name resources consistently: `file:/abs/path/package.json`, " +
      "`npm-install`, `db-migrations`. Pass wait_seconds (up to 50, or 3600 as a task) to block on the server until the lock frees, " +
      "instead of polling; waiters are served first come, first served. On success you get lock_token: keep it, " +
      "it is the only way to unlock_resource or renew_lock. Release as soon as the critical section ends. " +
      "If the wait times out you get wake_token: call again with it to keep your place in line. " +
      "Locks expire after ttl_seconds (default 900); renew_lock for longer work. Not re-entrant." + TASK_WAIT_NOTE + DEADLOCK_NOTE,
    args: v.object({
      name: text("name", "The resource to lock, e.g. `file:/repo/package.json` or `npm-install`."),
      agent_id: agentId("Who you are, e.g. `agent:claude-session-abc`. Shown to others as held_by."),
      ...ttlArgs("How long the lock lives unless renewed or released, in seconds (> 0).", DEFAULT_LOCK_TTL_SECONDS),
      ...waitArgs(
        "Block up to this many seconds (0–50, or up to 3600 with the MCP tasks extension) for the lock to free. Default 0: answer at once.",
        "The wake_token from an earlier timed-out wait: resumes your place in line.",
      ),
    }),
    async run(a, { kernel, signal }) {
      const r = await kernel.locks.acquire({ name: a.name, ...lockRequest(a) }, signal);
      return acquireResult(kernel, r);
    },
    async handBack(r, a, { kernel }) {
      if (r.locked === true && typeof r.lock_token === "string") await kernel.locks.release(a.name, r.lock_token, undefined);
    },
  }),

  defineTool({
    name: "unlock_resource",
    title: "Release a lock",
    description:
      "Release a lock you hold, with the lock_token lock_resource gave you. The lock passes at once to the " +
      "earliest agent blocked on it. A wrong token releases nothing. (Without a token, agent_id equal to the " +
      "holder releases it: kept for Airlock v1 scripts.)",
    args: v.object({
      name: text("name", "The resource name you locked."),
      lock_token: v.optional(text("lock_token", "The lock_token from lock_resource.", 64)),
      agent_id: v.optional(agentId("v1 path: release by holder id when no lock_token is given.")),
    }),
    async run(a, { kernel }) {
      return { released: await kernel.locks.release(a.name, a.lock_token, a.lock_token === undefined ? a.agent_id : undefined) };
    },
  }),

  defineTool({
    name: "renew_lock",
    title: "Extend a lock",
    description:
      "Extend a lock you hold so it does not expire mid-work: its expiry becomes now + ttl_seconds (default 900). " +
      "Identify it by lock_token (preferred) or by agent_id.",
    args: v.object({
      name: text("name", "The resource name you locked."),
      lock_token: v.optional(text("lock_token", "The lock_token from lock_resource.", 64)),
      agent_id: v.optional(agentId("The holder's agent_id, when no lock_token is given.")),
      ...ttlArgs("New lifetime from now, in seconds (> 0).", DEFAULT_LOCK_TTL_SECONDS),
    }),
    async run(a, { kernel }) {
      const r = await kernel.locks.renew(a.name, a.lock_token, a.agent_id, ttlSeconds(a, DEFAULT_LOCK_TTL_SECONDS)! * 1000);
      return r.renewed ? { renewed: true, expires_in_seconds: inSeconds(kernel, r.expiresAt) } : r;
    },
  }),

  defineTool({
    name: "list_locks",
    title: "List held locks",
    readOnly: true,
    description: "List every live lock: who holds it, when it expires, and who is waiting for it (in order).",
    args: v.object({}),
    async run(_a, { kernel }) {
      const now = kernel.clock.now();
      return (await kernel.locks.list()).map((l) => ({
        name: l.name,
        agent_id: l.agent_id,
        expires_in_seconds: inSeconds(kernel, l.expires_at),
        fence: l.fence,
        held_seconds: secondsSince(l.acquired_at, now),
        queue_depth: l.waiters.length,
        waiters: l.waiters.map((w) => ({ agent_id: w.agentId, waiting_seconds: w.waitingSeconds, blocked: w.attached })),
      }));
    },
  }),

  defineTool({
    name: "lock_resources",
    title: "Lock several resources at once",
    blocking: true,
    description:
      "Take several locks at once, all or nothing, so two agents that need overlapping sets can never deadlock. " +
      "Names are deduplicated and taken in byte order. On success you get one token per name in tokens; release " +
      "each with unlock_resource. If any is held you get nothing and held_by names the holder of the first held name. " +
      "Pass wait_seconds (up to 50, or 3600 as a task) to block until every name is free and take them together: you wait in line on " +
      "each name, nobody barges past you, and you never hold some of them while waiting. If the wait times out you " +
      "get wake_token: call again with the same names and it to keep your place." + TASK_WAIT_NOTE + DEADLOCK_NOTE,
    args: v.object({
      names: textList("names", "The resources to lock together."),
      agent_id: agentId("Who you are."),
      ...ttlArgs("Lifetime of every lock taken, in seconds (> 0).", DEFAULT_LOCK_TTL_SECONDS),
      ...waitArgs(
        "Block up to this many seconds (0–50, or up to 3600 with the MCP tasks extension) until all names are free. Default 0: answer at once.",
        "The wake_token from an earlier timed-out wait for the same names.",
      ),
    }),
    async run(a, { kernel, signal }) {
      const r = await kernel.locks.acquireMany({ names: a.names, ...lockRequest(a) }, signal);
      if (!r.locked) {
        return compact({
          locked: false,
          held_by: r.heldBy,
          wake_token: r.wake?.token,
          queue_position: r.wake?.position,
          retry_with: r.wake ? RETRY_MANY_WITH(r.wake.token) : undefined,
          deadlock: r.deadlock,
        });
      }
      return { locked: true, tokens: r.tokens, fences: r.fences, expires_in_seconds: inSeconds(kernel, r.expiresAt!) };
    },
    async handBack(r, _a, { kernel }) {
      if (r.locked !== true || typeof r.tokens !== "object" || r.tokens === null) return;
      for (const [name, token] of Object.entries(r.tokens as Record<string, string>)) await kernel.locks.release(name, token, undefined);
    },
  }),
];
