/**
 * `node --import @kiln/core/register app.js`: Node's own stack traces print kiln-built frames at their
 * authored location with a match status (runtime.ts). Importing this module installs the hook; it does
 * nothing else.
 */
import { installStackTraceHook } from './runtime.js';

installStackTraceHook();
