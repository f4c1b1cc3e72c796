// YAML edits that keep the user's bytes: `yaml` 2.x's Document API parses the file (comments
// included) and gives each node's offsets; the edit itself is a splice of whole lines, so comments,
// key order, quoting and the list style of the rest (goose writes `- item` at the key's column,
// which `String(doc)` would re-indent) stay byte for byte, and --remove takes out exactly the lines
// setup put in.
import { isMap, parseDocument, stringify, type Document, type YAMLMap } from "yaml";
import { AirlockError } from "../errors.ts";
import { getAt, SERVER_KEY, type Part } from "./client.ts";
import type { CreatedRecord } from "./files.ts";

function parseYaml(text: string, path: string): Document {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new AirlockError("config", `${path} is not valid YAML (${doc.errors[0]!.message.split("\n")[0]}); fix it or move it away, then run setup again`);
  const c = doc.contents;
  if (c !== null && !isMap(c)) throw new AirlockError("config", `${path} is not a YAML mapping; fix it or move it away, then run setup again`);
  return doc;
}

const lineStart = (text: string, at: number) => text.lastIndexOf("\n", at - 1) + 1;
const lineEnd = (text: string, at: number) => (at > 0 && text[at - 1] === "\n" ? at : text.indexOf("\n", at) < 0 ? text.length : text.indexOf("\n", at) + 1);

/** `key: value` as block lines, each indented by `col` spaces, nested by `unit`. */
function block(key: string, value: unknown, col: number, unit: number): string {
  return stringify({ [key]: value }, { indent: unit, lineWidth: 0 })
    .split("\n")
    .map((l) => (l === "" ? l : " ".repeat(col) + l))
    .join("\n");
}

function containerOf(doc: Document, container: string): YAMLMap | null | undefined {
  const node = doc.get(container, true);
  if (node === undefined) return undefined;
  return isMap(node) && node.items.length > 0 && !node.flow ? node : null;
}

/** Sets `container.key` to `value` in a block map, adding whole lines; `rec` notes a created container. */
export function yamlSet(text: string | null, path: string, container: string, key: string, value: unknown, rec: CreatedRecord): string {
  let t = text ?? "";
  const doc = parseYaml(t, path);
  const current = getAt(doc.toJS(), [container, key]);
  if (JSON.stringify(current) === JSON.stringify(value)) return t;
  if (current !== undefined) {
    t = yamlDelete(t, path, container, key);
    return yamlSet(t, path, container, key, value, rec);
  }
  const map = containerOf(doc, container);
  if (map === null) throw new AirlockError("config", `${path}: \`${container}\` is not a block mapping of entries; add the airlock entry by hand or make it one, then run setup again`);
  if (map === undefined) {
    // A new top-level `container:` at the end of the file.
    const prefix = t === "" || t.endsWith("\n") ? "" : "\n";
    rec.prefix = prefix;
    rec.paths = [[container]];
    return `${t}${prefix}${block(container, { [key]: value }, 0, 2)}`;
  }
  const first = map.items[0]!.key as { range?: [number, number, number] };
  const col = first.range![0] - lineStart(t, first.range![0]);
  const end = map.range![1];
  // The map ends a file that has no newline at the end: our lines start on a new one.
  const at = end > 0 && t[end - 1] === "\n" ? end : lineEnd(t, end);
  const sep = at === t.length && !t.endsWith("\n") ? "\n" : "";
  if (sep) rec.prefix = sep;
  return t.slice(0, at) + sep + block(key, value, col, col > 0 ? col : 2) + t.slice(at);
}

/** Takes out the lines of `container.key` (and the container, when setup created it and it is empty). */
export function yamlDelete(text: string, path: string, container: string, key: string, rec?: CreatedRecord): string {
  const doc = parseYaml(text, path);
  const map = doc.get(container, true);
  if (!isMap(map)) return text;
  const pair = map.items.find((p) => (p.key as { value?: unknown })?.value === key);
  if (!pair) return text;
  const created = rec?.paths?.some((p) => p.length === 1 && p[0] === container) ?? false;
  const prefix = rec?.prefix ?? "";
  let from: number;
  let to: number;
  if (created && map.items.length === 1) {
    const top = (doc.contents as YAMLMap).items.find((p) => (p.key as { value?: unknown })?.value === container)!;
    from = lineStart(text, (top.key as { range: [number, number, number] }).range[0]);
    to = lineEnd(text, map.range![1]);
  } else {
    from = lineStart(text, (pair.key as { range: [number, number, number] }).range[0]);
    const v = pair.value as { range?: [number, number, number] } | null;
    to = lineEnd(text, v?.range?.[1] ?? (pair.key as { range: [number, number, number] }).range[1]);
  }
  if (rec) {
    rec.paths = rec.paths?.filter((p) => !(p.length === 1 && p[0] === container));
    rec.prefix = undefined;
  }
  let before = text.slice(0, from);
  // The newline setup put before its lines (a file without one at the end) goes too.
  if (prefix !== "" && to === text.length && before.endsWith(prefix)) {
    before = before.slice(0, before.length - prefix.length);
    return before + text.slice(to).replace(/\n$/, "");
  }
  return before + text.slice(to);
}

/** Our server entry under a top-level map (`extensions` for goose) as a part. */
export function yamlServerPart(o: { path: string; container: string; entry: unknown; secret?: boolean }): Part {
  return {
    what: "MCP server",
    path: o.path,
    secret: o.secret,
    install: (text, rec) => yamlSet(text, o.path, o.container, SERVER_KEY, o.entry, rec),
    remove: (text, rec) => yamlDelete(text, o.path, o.container, SERVER_KEY, rec),
    isInstalled: (text) => text !== null && parseYaml(text, o.path).hasIn([o.container, SERVER_KEY]),
    isEmpty: (text) => text.trim() === "",
  };
}

/** The whole file is ours (a Continue block): written from `value`; a file that is not ours is refused. */
export function yamlOwnFilePart(o: { what?: string; path: string; header: string; value: unknown; secret?: boolean }): Part {
  const body = `${o.header}${stringify(o.value, { indent: 2, lineWidth: 0 })}`;
  const ours = (text: string) => text.startsWith(o.header);
  return {
    what: o.what ?? "MCP server",
    path: o.path,
    secret: o.secret,
    install(text) {
      if (text !== null && text.trim() !== "" && !ours(text)) throw new AirlockError("config", `${o.path} exists and was not written by airlock setup; move it away, then run setup again`);
      return body;
    },
    remove: (text) => (ours(text) ? "" : text),
    isInstalled: (text) => text !== null && ours(text),
    isEmpty: (text) => text.trim() === "",
  };
}

/** The value at `keys` in a YAML file's text (for doctor). */
export function yamlGet(text: string | null, path: string, keys: (string | number)[]): unknown {
  return text === null ? undefined : getAt(parseYaml(text, path).toJS(), keys);
}
