// A chat request as griptape's GriptapeCloudPromptDriver sends it (PromptStack.to_dict()["messages"], tool
// definitions, a driver configuration), and the error of a request the mapping cannot carry.

export type StructuredOutputStrategy = 'native' | 'tool' | 'rule';

export interface DriverConfiguration {
  model?: string | null;
  max_tokens?: number | null;
  use_native_tools?: boolean | null;
  temperature?: number | null;
  structured_output_strategy?: StructuredOutputStrategy | null;
  extra_params?: Record<string, unknown> | null;
}

/** A griptape artifact dict (`BaseArtifact.to_dict()`): TextArtifact, ActionArtifact, JsonArtifact, ... */
export interface ArtifactDict {
  type: string;
  value?: unknown;
  [member: string]: unknown;
}

export interface ToolActionDict {
  type?: string;
  tag: string;
  name: string;
  path?: string | null;
  input?: unknown;
}

export interface ContentDict {
  type: string;
  artifact?: ArtifactDict;
  action?: ToolActionDict;
}

export interface MessageDict {
  type?: string;
  role: string;
  content: ContentDict[];
  usage?: unknown;
}

export interface ToolDict {
  name: string;
  activities: Array<{ name: string; description?: string; json_schema?: unknown }>;
}

export interface ChatRequest {
  messages: MessageDict[];
  tools: ToolDict[];
  output_schema?: Record<string, unknown> | null;
  driver_configuration: DriverConfiguration;
}

/** A request the mapping refuses: the message says why, `path` points into the request body. */
export class ChatRequestError extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = 'ChatRequestError';
  }
}
