"""The screens over or beside the explorer: the unwinding debugger, the go-to dialogs, the help."""
