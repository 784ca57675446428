// First: the page's Content-Security-Policy, before anything of an edit renders.
import './csp';
import { registerRoot } from 'remotion';
import { Root } from './Root';

registerRoot(Root);
