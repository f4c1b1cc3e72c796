// Working-tree tools (SPEC §13, docs/worktrees.md): report_worktree, list_worktrees. check_paths'
// edited_by (paths.ts) reads what these report.
import * as v from "valibot";
import type { EditedBy, Worktree } from "../../domain/worktrees.ts";
import { MAX_BRANCH_LENGTH, MAX_DIRTY, MAX_HEAD_LENGTH } from "../../domain/worktrees.ts";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH, text } from "./args.ts";
import { compact, defineTool } from "./define.ts";
import { rooms } from "./rooms.ts";

/** 0..MAX_DIRTY repository-relative paths (a clean tree reports none). */
function pathList(field: string, description: string) {
  return v.pipe(
    v.array(
      v.pipe(
        v.string(`every entry of ${field} must be a string`),
        v.minLength(1, `entries of ${field} must not be empty`),
        v.maxLength(MAX_NAME_LENGTH, `entries of ${field} must be at most ${MAX_NAME_LENGTH} characters`),
      ),
      `${field} must be an array of paths`,
    ),
    v.maxLength(MAX_DIRTY, (i) => `${field} must have at most ${MAX_DIRTY} paths (got ${(i.input as unknown[]).length}); report the first ${MAX_DIRTY}`),
    v.description(description),
  );
}

export function worktreeView(t: Worktree) {
  return compact({
    agent_id: t.agentId,
    room: t.room,
    branch: t.branch ?? undefined,
    head: t.head ?? undefined,
    dirty_count: t.dirty.length,
    touched: t.touched.map((x) => x.path),
    reported_at: new Date(t.reportedAt).toISOString(),
  });
}

export function editedByView(e: EditedBy) {
  return compact({ path: e.path, agent_id: e.agentId, branch: e.branch ?? undefined, since: new Date(e.since).toISOString() });
}

const room = text(
  "room",
  "Your working directory (absolute): the daemon resolves it to its repository's room, as for claim_paths; or a room's plain name.",
);

export const worktreeTools = [
  defineTool({
    name: "report_worktree",
    title: "Report your working tree",
    description:
      "Tell other agents what your checkout holds uncommitted, so that an edit of theirs to a file you changed is flagged " +
      "even where nobody claimed it (the hooks send this for you at session start and after edits). dirty: every " +
      `uncommitted path (\`git status --porcelain\`, at most ${MAX_DIRTY}), replaced at each report; touched: the paths you ` +
      "edited yourself, added to the earlier ones; a touched path leaves once it is no longer dirty (committed or reverted). " +
      "Paths are repository-relative (or absolute inside room). Answers {room, dirty_count, touched}.",
    args: v.object({
      agent_id: text("agent_id", "Who you are (your agent_id).", MAX_ID_LENGTH),
      room,
      branch: v.optional(text("branch", "The checked-out branch (omit when detached).", MAX_BRANCH_LENGTH)),
      head: v.optional(text("head", "The commit HEAD points at (hex).", MAX_HEAD_LENGTH)),
      dirty: v.optional(pathList("dirty", `Every uncommitted path of the checkout (at most ${MAX_DIRTY}). Default none: a clean tree.`), []),
      touched: v.optional(pathList("touched", "Paths you edited yourself since the last report (each must be dirty too)."), []),
    }),
    async run(a, { kernel }) {
      const where = rooms.resolve(a.room, [...a.dirty, ...a.touched]);
      const dirty = where.paths.slice(0, a.dirty.length);
      const touched = where.paths.slice(a.dirty.length);
      const t = await kernel.worktrees.report({ agentId: a.agent_id, room: where.room, branch: a.branch, head: a.head, dirty, touched });
      return { room: t.room, dirty_count: t.dirty.length, touched: t.touched.map((x) => x.path) };
    },
  }),

  defineTool({
    name: "list_worktrees",
    title: "List agents' working trees",
    readOnly: true,
    description:
      "What each agent's checkout holds uncommitted, as reported: [{agent_id, room, branch, head, dirty_count, touched, " +
      "reported_at}], of one room (your working directory) or of every room. A report lapses with its agent.",
    args: v.object({ room: v.optional(room) }),
    async run(a, { kernel }) {
      const where = a.room === undefined ? undefined : rooms.resolve(a.room).room;
      return (await kernel.worktrees.list(where)).map(worktreeView);
    },
  }),
];
