#!/usr/bin/env bash
# VELMA's finetuned agent on a GPU machine: train a LoRA adapter on all 1,172 training-area routes of map2seq_seen
# (VELMA-FT by default: r 8, alpha 16 on q/v, lr 3e-4, batch 16, 20 epochs, 40 training-area routes held out to
# select the epoch), then run it on the embedded engine over Map2seq dev (unseen area) and report TC.
#
#   bash benchmarks/velma_train_gpu.sh [OUT] [METHOD ft|rbl] [EPOCHS] [LIMIT_SECONDS]
#
# One command, one time limit for the whole (default 3 h; an interrupted run resumes when started again), and
# every result under OUT: OUT/adapter-METHOD/ (adapter.gguf, adapter/, curves.png, record.json),
# OUT/train.json (the record), OUT/episodes/ (per-episode results) and OUT/dev.json (TC, SPD, KPA).
# Needs: pip install -e '.[train,llm,model-1_5b]' (a CUDA build of torch for the GPU; training uses it when
# torch.cuda.is_available()). Environment: DATA (default ../shared/data/velma), BASE (default
# llamacpp:qwen2.5-coder-1.5b), DEV_EPISODES (default all 800), JOBS (episode processes, default 8).
set -euo pipefail
OUT=${1:-runs/velma-gpu}
METHOD=${2:-ft}
EPOCHS=${3:-20}
LIMIT=${4:-10800}
DATA=${DATA:-../shared/data/velma}
BASE=${BASE:-llamacpp:qwen2.5-coder-1.5b}
JOBS=${JOBS:-8}
PY=${PY:-.venv/bin/python}
mkdir -p "$OUT"
deadline=$(( $(date +%s) + LIMIT ))
left() { echo $(( deadline - $(date +%s) )); }

"$PY" -c "import torch; print('torch', torch.__version__, 'cuda' if torch.cuda.is_available() else 'CPU ONLY')" \
    | tee "$OUT/device.txt"
timeout "$(left)" "$PY" -m situated navigate train --data "$DATA/map2seq_seen" --split dev,test --base "$BASE" \
    --out "$OUT/adapter-$METHOD" --method "$METHOD" --epochs "$EPOCHS" --held 40 --json \
    | tail -n 1 > "$OUT/train.json"
limit=()
[ -n "${DEV_EPISODES:-}" ] && limit=(--limit "$DEV_EPISODES")
timeout "$(left)" "$PY" -m situated navigate --data "$DATA/map2seq_unseen" --split dev --agent llm --shots 0 \
    --model "$BASE" --lora "$OUT/adapter-$METHOD/adapter.gguf" --jobs "$JOBS" --threads 2 "${limit[@]}" \
    --out "$OUT/episodes" --json | tail -n 1 | tee "$OUT/dev.json"
echo "Map2seq dev with the finetuned $BASE ($METHOD): $(cat "$OUT/dev.json")  [VELMA-FT 41.3, VELMA-RBL 45.3 TC]"
