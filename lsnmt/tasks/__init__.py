"""NER and QA fine-tuning of XLM-R with LMS / LMS+FD (LMS-FD Sec. 5.3-5.4): data, features, training, metrics."""
