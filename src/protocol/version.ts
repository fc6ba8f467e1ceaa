/** The hook SDK / guest protocol version recorded in every bundle manifest. Bump on an incompatible change. */
export const SDK_VERSION = "1";
