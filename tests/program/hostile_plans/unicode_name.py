# expect: parse-error line=3
def plan():
	wälk('kitchen')
