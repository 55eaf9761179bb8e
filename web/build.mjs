// `make web`: bundle the client (and nats.ws) into the gateway package's static/ folder.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "services", "gateway", "src", "cardroom_gateway", "static");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(here, "src", "main.js")],
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: true,
  sourcemap: true,
  outfile: join(out, "app.js"),
  // tweetnacl (under nats.ws) falls back to Node's crypto only where the browser's is missing
  external: ["crypto"],
  logLevel: "warning",
});
for (const file of ["index.html", "style.css"]) copyFileSync(join(here, file), join(out, file));
