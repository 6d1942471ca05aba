"""Answer stage: retrieved chunks → an answer whose every claim cites path:start-end."""
