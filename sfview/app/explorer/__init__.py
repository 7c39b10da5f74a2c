"""The explorer: its screen (`screen.py`) and the parts it composes: state, navigation, filtering, panes, worker."""
