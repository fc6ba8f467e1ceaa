export {
  line,
  lines,
  MAX_FIELD_CHARS,
  type PrintableOptions,
  type Printed,
  printable,
  printableJson,
} from "./printable.js";
