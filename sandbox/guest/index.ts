export { installPrelude, type PreludeConfig, type PreludeEntries } from "./prelude.js";
