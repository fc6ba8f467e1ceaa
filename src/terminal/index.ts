export { line, type PrintableOptions, printable, printableJson } from "./printable.js";
