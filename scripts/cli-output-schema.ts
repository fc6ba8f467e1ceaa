// Writes docs/cli-output.schema.json from the CLI's zod output schemas (src/cli/json-output*.ts).
// test/cli/json-output.test.ts fails while the file and the schemas differ.
import { writeFile } from "node:fs/promises";
import { cliOutputJsonSchema } from "../src/cli/json-output.js";

const file = new URL("../docs/cli-output.schema.json", import.meta.url);
await writeFile(file, `${JSON.stringify(cliOutputJsonSchema(), null, 2)}\n`);
console.log(`wrote ${file.pathname}`);
