// The peer baseline of bench/video-render.mjs: the bench's two scenes written as a plain Remotion
// project (what a team would write by hand with Remotion's own components), bundled apart from the
// engine's composition and rendered with renderMedia in the same run.
import { registerRoot } from 'remotion';
import { Root } from './Root';

registerRoot(Root);
