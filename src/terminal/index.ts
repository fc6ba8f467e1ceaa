export {
  clipped,
  line,
  lines,
  MAX_FIELD_CHARS,
  oneLine,
  type PrintableOptions,
  type Printed,
  printable,
  printableJson,
} from "./printable.js";
