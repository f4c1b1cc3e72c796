// Path-claim tools (advisory locks over globs of repository paths): claim_paths, release_paths,
// renew_paths, check_paths, list_path_claims, force_release_paths.
import * as v from "valibot";
import type { Kernel } from "../../domain/kernel.ts";
import type { Claim, Conflict } from "../../domain/path-index.ts";
import { DEFAULT_ROOM } from "../../domain/paths.ts";
import type { ClaimResult } from "../../domain/path-requests.ts";
import { clampedSeconds, MAX_ID_LENGTH, text, textList, ttlArgs, ttlSeconds } from "./args.ts";
import { compact, DEADLOCK_NOTE, defineTool, inSeconds, TASK_WAIT_NOTE } from "./define.ts";
import { rooms } from "./rooms.ts";
import { editedByView } from "./worktrees.ts";

export const DEFAULT_CLAIM_TTL_SECONDS = 900; // an editing session on one region; renew_paths for longer
const RETRY_WITH = (token: string) =>
  `call claim_paths again with the same paths and wake_token=${token} to keep your place in line, or re-scope to another region`;

const agentId = (what: string) => text("agent_id", what, MAX_ID_LENGTH);
const room = text(
  "room",
  "Your working directory, absolute (e.g. `/home/me/repo`): the daemon resolves it to its repository's room, so every " +
    "worktree and clone of one repository shares a room and two repositories never do; the answer names the room. " +
    `Any other string is a room's plain name; without room (and with no absolute path in paths) it is \`${DEFAULT_ROOM}\`.`,
);
const PATHS_NOTE = "Repository-relative (to the top level of the checkout `room` is in), or absolute inside that checkout.";
const ROOMLESS_WARNING =
  `no room given: this claim is in the room \`${DEFAULT_ROOM}\`, with its paths taken relative to no repository in particular. ` +
  "Pass your working directory (absolute) as room on every path call, so your claims live in your repository's room.";

/** A granted claim's word on claims in the room's aliases (which check_paths, and so every hook, also looks in). */
function aliasWarning(k: Kernel, conflicts: readonly Conflict[]): string | undefined {
  if (conflicts.length === 0) return undefined;
  const shown = conflicts.slice(0, 5).map((c) => `${c.heldBy}'s ${c.heldPath} [room ${c.room}] (both match ${c.witness}; expires in ${inSeconds(k, c.expiresAt ?? k.clock.now())}s)`);
  const more = conflicts.length > shown.length ? ` and ${conflicts.length - shown.length} more` : "";
  return (
    `granted, but it overlaps claims in rooms this repository's edits are also checked against: ${shown.join("; ")}${more}. ` +
    "Edits there are denied until those are released or expire: re-scope, or ask the holder."
  );
}

const claimToken = text("claim_token", "The claim_token claim_paths gave you.", 64);

function conflictView(k: Kernel, c: Conflict) {
  return compact({
    room: c.room, // only on a conflict found in an alias room (check_paths), not the one answered
    path: c.path,
    held_by: c.heldBy,
    held_path: c.heldPath,
    witness: c.witness,
    reason: c.reason ?? undefined,
    expires_in_seconds: c.expiresAt === undefined ? 0 : inSeconds(k, c.expiresAt),
  });
}

function claimResult(k: Kernel, r: ClaimResult, room: string) {
  if (r.granted) {
    return { granted: true, claim_token: r.token, room: r.room, paths: r.paths, fence: r.fence, expires_in_seconds: inSeconds(k, r.expiresAt) };
  }
  return compact({
    granted: false,
    room,
    conflicts: r.conflicts.map((c) => conflictView(k, c)),
    wake_token: r.wake?.token,
    queue_position: r.wake?.position,
    retry_with: r.wake ? RETRY_WITH(r.wake.token) : undefined,
    deadlock: r.deadlock,
  });
}

/** A claim as others see it: never its token, which is what releases it. */
export function claimView(k: Kernel, c: Claim) {
  return compact({
    agent_id: c.agentId,
    room: c.room,
    paths: c.paths,
    reason: c.reason ?? undefined,
    fence: c.fence,
    expires_in_seconds: inSeconds(k, c.expiresAt),
  });
}

export const pathTools = [
  defineTool({
    name: "claim_paths",
    title: "Claim paths before editing them",
    blocking: true,
    description:
      "Claim a region of the repository before you edit it, so other agents working in the same repository know it is " +
      "being changed. Pass your working directory (absolute) as room (without it the claim goes to room `default`, and the answer carries a warning). Paths are repository-relative globs: `*` within a segment, `**` any number of segments " +
      "(including none), `?`, `[...]`, `{a,b}`; a plain path also covers everything below it. Keep claims narrow " +
      "(`src/api/users/**`, not `src/**`). All paths of one call are granted together or none is; your own claims " +
      "never conflict with you. The first claimer wins: if another agent holds an overlapping region you get " +
      "granted:false and conflicts, each naming the holder, its pattern and a witness, a concrete path both patterns " +
      "match. Prefer to re-scope to another region, or message the holder, rather than wait; wait_seconds (up to 50, or 3600 as a task) " +
      "queues you fairly behind the overlapping claims instead. Claims are advisory (no file is locked), expire after " +
      "ttl_seconds (default 900) and vanish when your presence lapses. release_paths as soon as you are done." + TASK_WAIT_NOTE + DEADLOCK_NOTE,
    args: v.object({
      agent_id: agentId("Who you are, e.g. `agent:claude-session-abc`. Shown to others as held_by."),
      paths: textList("paths", `Globs of paths, e.g. [\`src/api/**\`, \`package.json\`]. ${PATHS_NOTE}`),
      room: v.optional(room),
      ...ttlArgs("How long the claim lives unless renewed or released, in seconds (> 0).", DEFAULT_CLAIM_TTL_SECONDS),
      wait_seconds: v.optional(
        clampedSeconds("wait_seconds", "Block up to this many seconds (0–50, or up to 3600 with the MCP tasks extension) in line for the region. Default 0: answer at once."),
        0,
      ),
      wake_token: v.optional(text("wake_token", "The wake_token from an earlier timed-out wait for the same paths.", 64)),
      reason: v.optional(text("reason", "What you are doing there, shown to agents you conflict with.", MAX_ID_LENGTH)),
    }),
    async run(a, { kernel, signal }) {
      const where = rooms.resolve(a.room, a.paths);
      const r = await kernel.paths.claim(
        {
          agentId: a.agent_id,
          paths: where.paths,
          room: where.room,
          ttlMs: ttlSeconds(a, DEFAULT_CLAIM_TTL_SECONDS)! * 1000,
          waitMs: a.wait_seconds * 1000,
          wakeToken: a.wake_token,
          reason: a.reason,
        },
        signal,
      );
      const out: Record<string, unknown> = claimResult(kernel, r, where.room);
      // Claims are granted and queued per room; a claim in the room's aliases (an older name of
      // the repository, or `default`) does not refuse this one, but it is said (docs/rooms.md).
      let warning = a.room === undefined && where.also.length === 0 ? ROOMLESS_WARNING : undefined;
      if (r.granted && where.also.length > 0) {
        const [first, ...rest] = where.also;
        // The claim is granted already: a look that fails (a check over budget) must not lose its token.
        const seen = await kernel.paths.check({ paths: where.paths, room: first, also: rest, agentId: a.agent_id }).catch(() => undefined);
        warning = seen ? aliasWarning(kernel, seen.conflicts.map((c) => ({ ...c, room: c.room ?? first }))) : undefined;
      }
      return warning ? { ...out, warning } : out;
    },
    async handBack(r, _a, { kernel }) {
      if (r.granted === true && typeof r.claim_token === "string") await kernel.paths.release(r.claim_token);
    },
  }),

  defineTool({
    name: "release_paths",
    title: "Release a path claim",
    description:
      "Release a claim you hold, with its claim_token, as soon as your edits there are done. Agents waiting for the region " +
      "get it at once. Releasing again answers released:false; a token never issued answers released:false, unknown:true.",
    args: v.object({ claim_token: claimToken }),
    async run(a, { kernel }) {
      if (await kernel.paths.release(a.claim_token)) return { released: true };
      return (await kernel.journal.mentionsToken("path.", a.claim_token)) ? { released: false } : { released: false, unknown: true };
    },
  }),

  defineTool({
    name: "renew_paths",
    title: "Extend a path claim",
    description: "Extend a claim you hold so it does not expire mid-edit: its expiry becomes now + ttl_seconds (default 900).",
    args: v.object({
      claim_token: claimToken,
      ...ttlArgs("New lifetime from now, in seconds (> 0).", DEFAULT_CLAIM_TTL_SECONDS),
    }),
    async run(a, { kernel }) {
      const r = await kernel.paths.renew(a.claim_token, ttlSeconds(a, DEFAULT_CLAIM_TTL_SECONDS)! * 1000);
      return r.renewed ? { renewed: true, expires_in_seconds: inSeconds(kernel, r.expiresAt) } : r;
    },
  }),

  defineTool({
    name: "check_paths",
    title: "Check paths against claims",
    readOnly: true,
    description:
      "Ask, without claiming anything, whether editing these paths would step on another agent's claim (what an edit " +
      "hook asks before a write). clear:true means no other agent's claim overlaps; otherwise each conflict names the " +
      "holder, its pattern and a witness path both match. Pass agent_id so your own claims are not reported, and your " +
      "working directory as room. A directory's check also covers the repository's older room names (its main worktree's " +
      "path, from before it had an origin) and `default` (claims made without room), with the same repository-relative " +
      "paths; a conflict found there names its room. edited_by lists other agents' uncommitted edits (report_worktree) " +
      "to files overlapping these paths, [{path, agent_id, branch, since}] (absent when none): no claim, so clear stays true, but coordinate " +
      "(send_message) before you change the same file.",
    args: v.object({
      paths: textList("paths", `Paths or globs you are about to edit. ${PATHS_NOTE}`),
      room: v.optional(room),
      agent_id: v.optional(agentId("Who you are: your own claims never conflict.")),
    }),
    async run(a, { kernel }) {
      const where = rooms.resolve(a.room, a.paths);
      const r = await kernel.paths.check({ paths: where.paths, room: where.room, agentId: a.agent_id, also: where.also });
      const out = { clear: r.clear, room: where.room, conflicts: r.conflicts.map((c) => conflictView(kernel, c)) };
      // In memory, after check's read caught up with other daemons; never part of clear. Only
      // when there is any, so the answer of a room nobody reports in keeps its shape.
      const edited = kernel.worktrees.editedBy(where.room, where.paths, a.agent_id);
      return edited.length > 0 ? { ...out, edited_by: edited.map(editedByView) } : out;
    },
  }),

  defineTool({
    name: "list_path_claims",
    title: "List path claims",
    readOnly: true,
    description:
      "List the live path claims of a room (or of every room when room is omitted): who holds which paths, why, and for how long. " +
      "A working directory given as room lists its repository's room.",
    args: v.object({ room: v.optional(room) }),
    async run(a, { kernel }) {
      const where = a.room === undefined ? undefined : rooms.resolve(a.room).room;
      return (await kernel.paths.list(where)).map((c) => claimView(kernel, c));
    },
  }),

  defineTool({
    name: "force_release_paths",
    title: "Force-release another agent's claims",
    description:
      "For the room's lead only (an agent registered with register_agent role `lead`): release another agent's claims " +
      "in a room, all of them or only those naming any of the given paths, e.g. when it is stuck or gone. The reason " +
      "is recorded. Anyone else gets an error.",
    args: v.object({
      agent_id: agentId("Who you are: must be registered with role `lead`."),
      holder: text("holder", "The agent whose claims to release.", MAX_ID_LENGTH),
      room: v.optional(room),
      paths: v.optional(textList("paths", "Only release the holder's claims that name one of these paths (as claimed).")),
      reason: text("reason", "Why, for the record.", MAX_ID_LENGTH),
    }),
    async run(a, { kernel }) {
      const where = rooms.resolve(a.room, a.paths);
      const paths = a.paths ? where.paths : undefined;
      const r = await kernel.paths.forceRelease({ agentId: a.agent_id, holder: a.holder, room: where.room, paths, reason: a.reason });
      return { released: r.released, room: where.room };
    },
  }),
];
