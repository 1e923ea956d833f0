"""Fine-tune YOLO11s on the camera-trap dataset (stand-in training script)."""
from ultralytics import YOLO

if __name__ == "__main__":
    model = YOLO("yolo11s.pt")
    model.train(
        data="../datasets/wildlife.yaml",
        epochs=100,
        imgsz=960,
        batch=16,
        patience=30,
        seed=0,
        device=0,
    )
