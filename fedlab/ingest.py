"""`python -m fedlab.ingest`: build the FOMC corpus snapshot (a Hydra app)."""
from __future__ import annotations

import fedlab.config  # noqa: F401  (resolvers, telemetry defaults)
import hydra
from omegaconf import DictConfig, OmegaConf

from fedlab.cli import run_cli, user_errors


@hydra.main(version_base="1.3", config_path="../conf", config_name="ingest")
@user_errors
def main(cfg: DictConfig) -> None:
    from fedlab.corpus.ingest import run_ingest

    corpus = cfg.corpus
    run_ingest(
        name=corpus.name,
        base_url=corpus.base_url,
        out_dir=corpus.dir,
        raw_cache_dir=corpus.raw_cache_dir,
        years=range(int(corpus.years.start), int(corpus.years.end) + 1),
        mirror=corpus.mirror,
        fetch=OmegaConf.to_container(corpus.fetch, resolve=True),
        volatile_ttl_h=corpus.volatile_ttl_h,
        allow_shrink=corpus.allow_shrink,
        max_doc_chars=int(corpus.get("max_doc_chars", 1_000_000)),
    )


if __name__ == "__main__":
    run_cli(main)
