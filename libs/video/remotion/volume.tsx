// The gain of a volume effect: one definition for the page and the engine (soundtrack.ts).
export { fadeVolume } from '../src/props.js';
