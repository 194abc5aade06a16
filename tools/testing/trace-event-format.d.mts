export const traceEventSchema: object;

export interface TraceEvent {
  name?: string;
  cat?: string;
  ph: string;
  ts?: number;
  dur?: number;
  pid?: number;
  tid?: number;
  args?: Record<string, any>;
}

export interface TraceTrack {
  tid: number;
  name: string | undefined;
  spans: (TraceEvent & { name: string; ts: number; dur: number })[];
}

export interface TraceProcess {
  pid: number;
  name: string | undefined;
  captures: { started: Record<string, any>; end: Record<string, any> | undefined }[];
  /** As the last capture's closing record says; `cut`: it has none; `unknown`: no capture record at all. */
  state: 'complete' | 'incomplete' | 'cut' | 'unknown';
  tracks: TraceTrack[];
  spans: TraceTrack['spans'];
}

/** The events of a JSON Array Format trace (the closing `]` optional); throws when the text is not one. */
export function parseTrace(text: string): { events: TraceEvent[]; closed: boolean };

/** Every violation of the format (empty: valid), and the trace read back. */
export function checkTrace(text: string): { errors: string[]; events: TraceEvent[]; processes: TraceProcess[] };
