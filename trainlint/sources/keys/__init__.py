"""Every key a framework accepts, read from its sources (never imported), for the typo check
(TL903) of its format."""
