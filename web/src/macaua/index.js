// Macaua in the page: the mental poker of libs/mentalpoker and a player's moves, in JS.
export * from "./group.js";
export * from "./cards.js";
export * from "./masking.js";
export * from "./proofs.js";
export * from "./keys.js";
export * from "./argument.js";
export * from "./protocol.js";
export * from "./signing.js";
export * from "./rules.js";
export { MacauaPlayer } from "./player.js";
export { askedOf } from "./game.js";
export { TransitionVerifier, Unverifiable as UnverifiableTransition } from "./verify.js";
