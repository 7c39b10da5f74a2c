"""What the commands write: each module turns a model or an engine's answer into the text or JSON of a command."""
