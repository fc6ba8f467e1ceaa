export { type PrintableOptions, printable, printableJson } from "./printable.js";
