export { type Infra, startInfra } from "./infra.js";
