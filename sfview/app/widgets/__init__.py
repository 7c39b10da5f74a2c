"""The explorer's panes and lines: each widget draws what the screen gives it and tells it of the user's moves."""
