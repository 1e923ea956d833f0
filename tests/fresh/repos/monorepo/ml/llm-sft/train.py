"""Stand-in for the SFT entry point: reads the model and TrainingArguments from --config."""
import argparse
from dataclasses import dataclass

from transformers import HfArgumentParser, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    config = parser.parse_args().config
    model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_yaml_file(config)
    print(model_args, training_args)


if __name__ == "__main__":
    main()
