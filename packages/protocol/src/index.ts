export * from "./catalog-view/index.js";
export * from "./citations/index.js";
export * from "./envelope.js";
export * from "./errors.js";
export * from "./naming/index.js";
export * from "./schemas/index.js";
export * from "./subjects.js";
export * from "./validation.js";
