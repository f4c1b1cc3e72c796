// Hook entries kept in a JSON file as `hooks.<event>: [entry, …]` (Copilot CLI's hooks file,
// `{version: 1, hooks: {…}}`; Kiro CLI's agent file, `{…, hooks: {…}}`): one entry of ours per
// event, recognised by its command, replaced when it differs, removed exactly on --remove.
import type { JSONPath } from "jsonc-parser";
import { getAt, hookCommand, isOurHookCommand, jsonAppend, jsonDelete, jsonSet, parseJsonc, pruneCreated, type HookEvent, type Part, type SetupContext } from "./client.ts";

export interface FlatHook {
  /** The client's event name (the key under `hooks`). */
  event: string;
  hook: HookEvent;
  /** Extra members of the entry (a matcher, a timeout). */
  extra?: Record<string, unknown>;
}

export function flatHooksPart(
  ctx: SetupContext,
  o: {
    client: string;
    file: string;
    hooks: FlatHook[];
    /** The member of an entry that holds the command: `bash` (Copilot CLI), `command` (Kiro). */
    commandKey: string;
    /** Members the file needs before the hooks (e.g. `version: 1`); added only when missing. */
    header?: Record<string, unknown>;
    /** The file is a whole document of ours when created: what is left once the hooks are gone counts as empty. */
    emptyKeys?: string[];
  },
): Part {
  const isOurs = (h: unknown) => isOurHookCommand((h as Record<string, unknown> | undefined)?.[o.commandKey], o.client);
  const removeOurs = (text: string, path: JSONPath) => {
    const arr = getAt(parseJsonc(text, o.file), path);
    if (!Array.isArray(arr)) return text;
    let t = text;
    for (let i = arr.length - 1; i >= 0; i--) if (isOurs(arr[i])) t = jsonDelete(t, [...path, i]);
    return t;
  };
  const headerKeys = Object.keys(o.header ?? {});
  return {
    what: "hooks",
    path: o.file,
    install(text, rec) {
      let t = text ?? "{}\n";
      for (const [k, v] of Object.entries(o.header ?? {})) {
        if (getAt(parseJsonc(t, o.file), [k]) !== undefined) continue;
        // A member appended to a file that had none of it: noted so --remove takes it out again.
        t = jsonSet(t, o.file, [k], v, {});
        rec.paths = [...(rec.paths ?? []), [k]];
      }
      for (const h of o.hooks) {
        const path = ["hooks", h.event];
        const want = { [o.commandKey]: hookCommand(ctx, o.client, h.hook), ...(h.extra ?? {}) };
        const arr = getAt(parseJsonc(t, o.file), path);
        const ours = Array.isArray(arr) ? arr.filter(isOurs) : [];
        if (ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(want)) continue;
        if (ours.length > 0) t = removeOurs(t, path);
        t = jsonAppend(t, o.file, path, want, rec);
      }
      return t;
    },
    remove(text, rec) {
      let t = text;
      for (const h of o.hooks) t = removeOurs(t, ["hooks", h.event]);
      const added = (rec.paths ?? []).filter((p) => p.length === 1 && headerKeys.includes(String(p[0])));
      rec.paths = rec.paths?.filter((p) => !added.includes(p));
      t = pruneCreated(t, o.file, rec);
      if (getAt(parseJsonc(t, o.file), ["hooks"]) === undefined) for (const p of added) t = jsonDelete(t, p);
      return t;
    },
    isInstalled(text) {
      if (text === null) return false;
      const doc = parseJsonc(text, o.file);
      return o.hooks.some((h) => {
        const arr = getAt(doc, ["hooks", h.event]);
        return Array.isArray(arr) && arr.some(isOurs);
      });
    },
    isEmpty(text) {
      const doc = parseJsonc(text, o.file) as Record<string, unknown>;
      const ignore = new Set([...headerKeys, ...(o.emptyKeys ?? [])]);
      return Object.keys(doc).every((k) => ignore.has(k) || (k === "hooks" && JSON.stringify(doc.hooks) === "{}"));
    },
  };
}
