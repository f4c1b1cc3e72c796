// The version is package.json's, baked in at build time (the import is bundled).
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
