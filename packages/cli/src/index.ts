export { main, EXIT_OK, EXIT_FAILURE, EXIT_USAGE } from './main.js';
export { formatDigestText, formatDiffText } from './format.js';
