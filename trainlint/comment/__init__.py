"""Sticky PR/MR comments: ``sync(host, body, marker, behavior)`` creates, updates or replaces the
one comment carrying ``marker`` on a GitHub pull request or a GitLab merge request.

* :mod:`trainlint.comment.sticky`: finding ours by the marker and choosing the requests (shared).
* :mod:`trainlint.comment.github`, :mod:`trainlint.comment.gitlab`: endpoints and headers.
* :mod:`trainlint.comment.http`: the client (retries, pagination, the token kept out of messages).
"""

from trainlint.comment.github import GitHubPullRequest, github_from_env
from trainlint.comment.gitlab import GitLabMergeRequest, gitlab_from_env
from trainlint.comment.http import CommentError, RetryPolicy
from trainlint.comment.sticky import BEHAVIORS, Behavior, Comment, Host, Outcome, sync

__all__ = [
    "BEHAVIORS",
    "Behavior",
    "Comment",
    "CommentError",
    "GitHubPullRequest",
    "GitLabMergeRequest",
    "Host",
    "Outcome",
    "RetryPolicy",
    "github_from_env",
    "gitlab_from_env",
    "sync",
]
